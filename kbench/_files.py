"""Files written atomically: a temporary file in the target's folder, renamed over it when
complete, so a reader (or a rerun after a kill) never sees half a file."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
import unicodedata
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

_UMASK = os.umask(0o022)  # read the process umask (there is no other way), then restore it
os.umask(_UMASK)


#: a temporary file of :func:`atomic_path` untouched this long (seconds) was left by a killed write
STALE_SECONDS = 3600


#: the longest name of a file or folder (bytes) on Linux file systems
NAME_MAX = 255
#: the longest results folder (bytes, absolute): a path is at most 4096 bytes (PATH_MAX), and
#: kbench writes files up to ~400 bytes below its folder (five slugs and a file name)
MAX_FOLDER_BYTES = 3072

#: Unicode categories no file or folder name of a result holds: controls (C0, DEL, C1),
#: formatting (bidi overrides, zero-width), line and paragraph separators
UNPRINTABLE = ("Cc", "Cf", "Zl", "Zp")


def check_name(path) -> str:
    """A path without a control character (a NUL, a newline), which no file name can hold, nor
    an invisible one that reorders or hides what a terminal shows (a bidi override, U+2028)."""
    text = str(path)
    if any(unicodedata.category(character) in UNPRINTABLE for character in text):
        raise ValueError(f"{text!r} holds a control or invisible formatting character (a NUL, a "
                         "newline, a bidi override, …); name the folder without it.")
    return text


def check_no_wildcard(path, what: str = "a folder") -> None:
    """A path the workflow can name: no ``{`` or ``}``, which Snakemake reads as a wildcard."""
    if set("{}") & set(str(path)):
        raise ValueError(f"a '{{' or '}}', which Snakemake reads as a wildcard; name {what} "
                         "without one.")


def _is_loop(path: Path) -> bool:
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def expand_home(path) -> Path:
    """``path`` with a leading ``~`` (or ``~user``) expanded, as everywhere in kbench; an unknown
    user is a ValueError (a folder named so is written ``./~name``)."""
    try:
        return Path(path).expanduser()
    except RuntimeError:
        user = str(path).split("/", 1)[0]
        raise ValueError(f"{str(path)!r}: there is no user {user[1:]!r} whose home {user} could "
                         f"be; for a folder named {user!r}, write ./{user}.") from None


def check_folder(path) -> Path:
    """A folder name results can go to, ``~`` expanded as everywhere in kbench: not empty, no
    control character, not a file and not under one (nothing is created)."""
    if str(path).strip() == "":
        raise ValueError("the folder name is empty; name a results folder, e.g. results.")
    check_name(path)
    path = expand_home(path)
    _check_length(path)
    for folder in (path, *path.parents):
        try:
            if folder.is_symlink() and not folder.exists():
                if _is_loop(folder):
                    raise ValueError(f"{folder} is a loop of symbolic links (it never reaches a "
                                     "folder); name another folder, or replace a link of the loop.")
                raise ValueError(f"{folder} is a link to {os.readlink(folder)}, which does not "
                                 "exist; create that folder or name another.")
            if folder.exists():
                if not folder.is_dir():
                    raise ValueError(f"{folder} is a file, not a folder; name a folder.")
                break
        # a name past the file system's limit (ENAMETOOLONG), a loop of links
        except OSError as exc:
            raise ValueError(f"{str(folder)[:80]}…: {exc.strerror or exc}; name another "
                             "folder.") from None
    return Path(path)


def _check_length(path: Path) -> None:
    """A folder whose name and the paths of the files kbench writes below it fit the file
    system's limits (checked before anything is computed or created)."""
    size = len(os.fsencode(os.path.abspath(path)))
    if size > MAX_FOLDER_BYTES:
        raise ValueError(f"{str(path)[:80]}…: a folder path of {size} bytes; with the files kbench "
                         "writes below it, a path would pass the system's 4096 bytes: name a "
                         f"folder of at most {MAX_FOLDER_BYTES} bytes.")
    long = next((part for part in path.parts if len(os.fsencode(part)) > NAME_MAX), None)
    if long is not None:
        raise ValueError(f"{long[:80]}…: a folder name of {len(os.fsencode(long))} bytes; a name "
                         f"is at most {NAME_MAX} bytes: shorten it.")


def check_writable(folder) -> None:
    """Create ``folder`` and write a file in it, or a ValueError naming it and the OS's reason
    (a read-only or full file system), before any result is computed."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".kbench-probe.", dir=folder)
        try:
            os.write(fd, b"probe")
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        raise ValueError(f"cannot write results in {folder}: {exc.strerror or exc}.") from None


def check_creatable(folder) -> None:
    """:func:`check_writable` that leaves nothing behind: the folders it created for the probe
    are removed (a config checked by a dry run writes no folder)."""
    folder = Path(folder).absolute()
    missing = [path for path in (folder, *folder.parents) if not path.exists()]
    try:
        check_writable(folder)
    finally:
        for path in missing:  # deepest first
            with contextlib.suppress(OSError):
                path.rmdir()


def check_writable_option(option: str, folder, below: str = "") -> None:
    """:func:`check_writable` on the folder an option names (a checked folder name), or on
    its subfolder ``below``; the ValueError names the option."""
    try:
        check_writable(check_folder(folder) / below)
    except ValueError as exc:
        raise ValueError(f"{option}: {exc}") from None


def sweep_temporary(folder, now: float) -> int:
    """Remove the temporary files of killed writes under ``folder`` (untouched for
    :data:`STALE_SECONDS` before ``now``, a ``time.time()``); how many went."""
    removed = 0
    for tmp in Path(folder).rglob(".*.tmp"):
        with contextlib.suppress(OSError):  # another run renamed or removed it meanwhile
            if now - tmp.stat().st_mtime > STALE_SECONDS:
                tmp.unlink()
                removed += 1
    return removed


@contextlib.contextmanager
def atomic_path(path, suffix: str = ".tmp") -> Iterator[str]:
    """Yield a temporary path beside ``path``; on success it replaces ``path``, on failure it
    is removed. ``suffix`` is the temporary file's ending (np.savez appends .npz otherwise)."""
    path = Path(path)
    # the process's own: a plugin that changed it does not make the folders unreadable
    os.umask(_UMASK)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=suffix, dir=path.parent)
    except OSError as exc:
        raise _naming(exc, path) from None
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes it private; the result is an ordinary file
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _naming(exc, path) from None
        raise


def _naming(exc: OSError, path: Path) -> OSError:
    """``exc`` naming the file being written, not its temporary file (or none)."""
    return OSError(exc.errno, exc.strerror or str(exc), str(path))


def write_npz(path, **arrays) -> None:
    """np.savez to ``path``, atomically, uncompressed (large float arrays do not compress)."""
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, **arrays)


# Keyed caches: work one process saves for others (exact baselines, merge-tree nodes) is an
# npz with a ``key``, what it was computed from, so a stale file is never used; a job that
# could not compute it writes ``absent``, why, instead.
def _key_text(key: str | dict) -> str:
    return key if isinstance(key, str) else json.dumps(key, sort_keys=True)


def write_keyed_npz(path, key: str | dict, **arrays) -> None:
    """Save ``arrays`` computed from ``key`` (a dict is written as sorted JSON), atomically."""
    write_npz(path, key=np.array(_key_text(key)), **arrays)


def write_absent(path, reason: str) -> None:
    """Save why there is nothing to load at ``path``."""
    write_npz(path, absent=np.array(reason))


def absent_reason(path) -> str | None:
    """Why there is nothing to load at ``path`` (:func:`write_absent`), or None."""
    with np.load(path, allow_pickle=False) as archive:
        return str(archive["absent"]) if "absent" in archive.files else None


#: what reading a damaged .npz raises (truncated, overwritten, not an archive)
UNREADABLE = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile)


def read_keyed_npz(path, key: str | dict, required=()) -> dict[str, np.ndarray] | str | None:
    """The arrays saved at ``path`` for ``key``, read into memory; the reason when the file
    says why it is absent; None when there is no file, or it was computed from something
    else, or it lacks one of the ``required`` arrays, or it cannot be read (a cache file
    damaged outside kbench, whose writes are atomic: computed again)."""
    if not Path(path).is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as archive:
            if "absent" in archive.files:
                return str(archive["absent"])
            if "key" not in archive.files or str(archive["key"]) != _key_text(key):
                return None
            if not set(required) <= set(archive.files):
                return None
            return {name: archive[name] for name in archive.files if name != "key"}
    except UNREADABLE:
        return None


def write_text(path, text: str) -> None:
    """``text`` (UTF-8) to ``path``, atomically."""
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
