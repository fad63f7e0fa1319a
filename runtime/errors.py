"""User-facing errors: each prints as one line, with no traceback, from the CLI and the window.

Everything a user can cause (a bad scene file, a bad argument, a request beyond the device's
limits, a machine with no GPU adapter) raises an ``EmberError``. Anything else is a bug in emberfx
and keeps its traceback.
"""

from __future__ import annotations


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
