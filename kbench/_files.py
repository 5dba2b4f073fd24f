"""Files written atomically: a temporary file in the target's folder, renamed over it when
complete, so a reader (or a rerun after a kill) never sees half a file."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

_UMASK = os.umask(0o022)  # read the process umask (there is no other way), then restore it
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_path(path, suffix: str = ".tmp") -> Iterator[str]:
    """Yield a temporary path beside ``path``; on success it replaces ``path``, on failure it
    is removed. ``suffix`` is the temporary file's ending (np.savez appends .npz otherwise)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes it private; the result is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_npz(path, **arrays) -> None:
    """np.savez to ``path``, atomically, uncompressed (large float arrays do not compress)."""
    import numpy as np

    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, **arrays)


def write_text(path, text: str) -> None:
    """``text`` (UTF-8) to ``path``, atomically."""
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
