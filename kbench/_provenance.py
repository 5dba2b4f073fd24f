"""Where kbench's code comes from: its version, and the git commit when it runs from a checkout."""

from __future__ import annotations

import subprocess
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

try:
    KBENCH_VERSION = version("kbench")
except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
    KBENCH_VERSION = "0+unknown"


@cache
def kbench_commit() -> str | None:
    """The commit of the git checkout kbench is imported from, with ``+dirty`` when the code's
    tracked files (the package, and the plugin packages kept beside it) differ from it; None
    for an installed (non-editable) copy or without git. Results a sweep writes into the
    checkout (results/) do not make the code dirty."""
    package = Path(__file__).resolve().parent
    root = package.parent
    if not (root / ".git").exists():
        return None
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--",
                                package.name, "plugins"], capture_output=True, text=True, timeout=10,
                               check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit[:12] + ("+dirty" if dirty else "")
