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


def checkout_commit(package: Path) -> str | None:
    """The commit of the git checkout holding the package folder ``package``, with ``+dirty``
    when the code's tracked files (the package, and the plugin packages kept beside it in
    ``plugins/``) differ from it; None outside a checkout or without git. Results a sweep
    writes into the checkout (results/) do not make the code dirty."""
    root = package.parent
    if not (root / ".git").exists():
        return None
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                                text=True,
                                timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no", "--",
                                package.name, "plugins"], capture_output=True, text=True,
                               timeout=10,
                               check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit[:12] + ("+dirty" if dirty else "")


@cache
def kbench_commit() -> str | None:
    """kbench's :func:`checkout_commit`: None for an installed (non-editable) copy."""
    return checkout_commit(Path(__file__).resolve().parent)
