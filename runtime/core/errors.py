"""User-facing errors: each prints as one line, with no traceback, from the CLI and the window.

Everything a user can cause (a bad scene file, a bad argument, a request beyond the device's
limits, a machine with no GPU adapter) raises an ``EmberError``. Anything else is a bug in emberfx
and keeps its traceback.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path


class EmberError(Exception):
    """A mistake in the user's input or environment, explained in one line."""


class UsageError(EmberError):
    """A command-line argument that cannot be used (exit status 2, with the usage line)."""


class SceneError(EmberError):
    """A scene file that cannot be loaded: names the file, the entity, the field path, what was
    expected and what was found."""

    def __init__(self, path, message: str, *, entity: str | None = None, field: str | None = None):
        self.path = str(path) if path is not None else "<scene>"
        self.entity = entity
        self.field = field
        self.detail = message
        where = [self.path]
        if entity is not None:
            where.append(f"entity '{entity}'")
        if field:
            where.append(field)
        super().__init__(": ".join(where) + ": " + message)


class NoAdapterError(EmberError):
    """No GPU adapter (not even a software one) could be found."""


class DeviceLimitError(EmberError):
    """A request (buffer size, texture size, dispatch size) beyond what the device allows."""


class ShaderError(EmberError):
    """WGSL that does not compile; the message names the shader file and line."""


class FrameGraphError(EmberError):
    """Passes that cannot be ordered or that read a resource nothing wrote."""


_SPECIAL_FILES = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def special_file_problem(path, kind: str) -> str | None:
    """Why ``path`` cannot be read as a ``kind`` file without opening it, or None: a FIFO blocks
    the open until someone writes to it and a device such as /dev/zero never ends, so only
    regular files (or links to them) are read. A missing path or a folder gives None: the
    reader names those itself."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode):
        return None
    return (f"expected a regular {kind} file, found {file_kind(info.st_mode)} at "
            f"{os.path.abspath(path)}")


def file_kind(mode: int) -> str:
    """What a file of ``os.stat`` mode ``mode`` is, in words ("a FIFO (named pipe)", ...), for
    the errors of readers that accept regular files only."""
    if stat.S_ISDIR(mode):
        return "a directory"
    return next((name for test, name in _SPECIAL_FILES if test(mode)), "a special file")


def read_user_text(path, kind: str,
                   error: Callable[[str, int | None, int | None], EmberError]) -> str:
    """The UTF-8 text of a file the user named (a leading BOM, which some Windows editors add,
    is dropped). Any problem raises ``error(message, line, column)``; line and column are set
    only when the problem has a place in the text. A FIFO or a device is refused unread
    (special_file_problem)."""
    special = special_file_problem(path, kind)
    if special is not None:
        raise error(special, None, None)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise error(f"expected an existing {kind} file, found nothing at "
                    f"{os.path.abspath(path)}", None, None) from None
    except IsADirectoryError:
        raise error(f"expected a {kind} file, found a directory", None, None) from None
    except OSError as exc:
        raise error(f"expected a readable file, found: {exc.strerror or exc}", None, None) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(f"expected UTF-8 text, found byte 0x{data[exc.start]:02x}",
                    line, column) from None
