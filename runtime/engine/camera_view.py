"""``ctx.camera`` in a script: the Engine's live camera, each assignment checked like the
scene file's ``[camera]`` table.

A script reads and sets fields by name (``ctx.camera.position = (x, y, z)``); a value the
``[camera]`` table would refuse raises a one-line SceneError naming the field, and the camera
keeps its last valid values. The window's mouse (orbit, pan, zoom) moves the same camera, so a
script that moves it each step and a user who drags it take turns: a script can notice the
user's change by comparing with what it set last.
"""

from __future__ import annotations

import dataclasses
import difflib

from emberfx.core.errors import SceneError
from emberfx.model.scene import validated_copy

__all__ = ["CameraView"]


class CameraView:
    """The live camera of ``engine``, checked on every assignment."""

    __slots__ = ("_engine",)

    def __init__(self, engine):
        object.__setattr__(self, "_engine", engine)

    def __getattr__(self, name: str):
        return getattr(self._engine.camera, name)

    def __setattr__(self, name: str, value) -> None:
        camera = self._engine.camera
        names = [f.name for f in dataclasses.fields(camera)]
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise SceneError(None, f"expected one of {', '.join(names)}, found '{name}'{hint}",
                             field=f"ctx.camera.{name}")
        try:
            checked = validated_copy(dataclasses.replace(camera, **{name: value}), "camera")
        except SceneError as exc:
            raise SceneError(None, exc.detail.removeprefix(f"{name}: "),
                             field=f"ctx.camera.{name}") from None
        except (TypeError, ValueError) as exc:   # the Camera's own checks, before the loader's
            detail = str(exc).removeprefix(f"{name}: ")
            if not detail.startswith("expected"):
                detail = f"expected a value the [camera] table takes, found {value!r} ({detail})"
            raise SceneError(None, detail, field=f"ctx.camera.{name}") from None
        setattr(camera, name, getattr(checked, name))

    def __repr__(self) -> str:
        return f"ctx.camera: {self._engine.camera!r}"
