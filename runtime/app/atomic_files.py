"""Atomic output files: each written under a hidden temporary name and renamed into place.

The temp file lies in the destination folder (same folder, so the final ``os.replace`` is a rename
on one filesystem and never a copy); only a clean finish renames it over the requested path, and a
failure (Ctrl-C and SIGTERM included) deletes it. ``OutputGroup`` holds the finished files of one
run and renames them together, so a run's outputs appear together or not at all.

A process killed outright (kill -9, a lost machine) cannot delete its temp file: SIGKILL cannot
be handled. Temp names carry the host and process id (``.clip.emberfx-HOST-PID-HEX.tmp.mp4``),
and each new write into a folder removes the emberfx temp files there whose process on this host
is gone, never those of a live process (a sweep runs many workers into one folder).
"""

from __future__ import annotations

import os
import re
import secrets
import socket
from pathlib import Path

from emberfx.core.errors import EmberError

TEMP_NAME = re.compile(r"^\..*\.emberfx-(?P<host>[A-Za-z0-9-]*)-(?P<pid>[0-9]+)-[0-9a-f]{8}"
                        r"\.tmp(\.[A-Za-z0-9]+)?$")


def host_tag() -> str:
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:32]


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)   # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return True
    except OSError:       # EPERM: it exists, as another user
        return False
    return False


def remove_stale_temp_files(folder: Path) -> list[Path]:
    """Delete the emberfx temp files in ``folder`` left by processes of this host that are gone.

    Files of other hosts (a folder shared over the network) and of live processes are kept. Only
    on POSIX: Windows has no harmless "does this process exist" signal.
    """
    if os.name != "posix":
        return []
    host, removed = host_tag(), []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    for name in names:
        match = TEMP_NAME.match(name)
        if match is None or match["host"] != host:
            continue
        pid = int(match["pid"])
        if pid != os.getpid() and _process_gone(pid):
            try:
                os.unlink(folder / name)
                removed.append(folder / name)
            except OSError:
                pass   # gone already (another sweep), or not ours to delete
    return removed


def check_target(path: Path) -> None:
    """A one-line EmberError when ``path`` cannot be an output file: no such folder, or a
    folder by that name. Called before rendering, so a bad path costs no simulation."""
    if not path.parent.is_dir():
        raise EmberError(f"cannot write {path}: folder {path.parent} does not exist")
    if path.is_dir():
        raise EmberError(f"cannot write {path}: it is a folder")


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two output paths name one file (after symbolic links and ``..``)."""
    return os.path.normcase(Path(a).resolve()) == os.path.normcase(Path(b).resolve())


class OutputGroup:
    """The files of one run, which appear together or not at all.

    Writers given a group leave their finished, verified file at its temp name (``keep``);
    ``commit`` renames them all into place (renames in one folder, each instant), ``discard``
    deletes them all. So a failure in the last file (a full disk for ``--depth``) leaves none of
    the run's files at its final name, not even those finished before it.
    """

    def __init__(self) -> None:
        self._files: list[tuple[Path, Path]] = []   # (temp, target)

    def keep(self, tmp: Path, path: Path) -> None:
        self._files.append((tmp, path))

    def commit(self) -> None:
        files, self._files = self._files, []
        for i, (tmp, path) in enumerate(files):
            try:
                os.replace(tmp, path)
            except OSError as exc:
                for left, _ in files[i:]:
                    remove_file(left)
                raise EmberError(f"cannot write {path}: {exc.strerror or exc}") from None

    def discard(self) -> None:
        files, self._files = self._files, []
        for tmp, _ in files:
            remove_file(tmp)


def temp_path(path: Path) -> Path:
    """Create (exclusively) and return a hidden temp file next to ``path`` with its extension.

    Same extension, because ffmpeg and imageio choose the container from it. Created with mode
    0o666 minus the umask, so the renamed result has ordinary permissions (mkstemp would give
    0o600).
    """
    check_target(path)
    folder = path.parent
    remove_stale_temp_files(folder)
    owner = f"emberfx-{host_tag()}-{os.getpid()}"
    for _ in range(100):
        tmp = folder / f".{path.stem}.{owner}-{secrets.token_hex(4)}.tmp{path.suffix}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        except OSError as exc:
            raise EmberError(f"cannot write {path}: {exc.strerror or exc}") from None
        os.close(fd)
        return tmp
    raise EmberError(f"cannot write {path}: no free temporary name in {folder}")


def remove_file(path: Path | None) -> None:
    if path is not None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def write_atomically(path: str | os.PathLike, write, verify=None,
                     group: OutputGroup | None = None) -> Path:
    """Call ``write(temp_path)`` on a temp file next to ``path``, then ``verify(temp_path)`` when
    given (it raises EmberError on a bad file), then rename it into place, or, with a ``group``,
    leave it to the group's commit. A failure (Ctrl-C included) leaves no file; an OSError
    becomes a one-line EmberError."""
    path = Path(path)
    tmp = temp_path(path)
    try:
        write(tmp)
        if verify is not None:
            verify(tmp)
        if group is not None:
            group.keep(tmp, path)
        else:
            os.replace(tmp, path)
    except OSError as exc:
        remove_file(tmp)
        raise EmberError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        remove_file(tmp)
        raise
    return path
