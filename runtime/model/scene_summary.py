"""What ``emberfx validate SCENE`` prints: a readable summary of a loaded scene (no GPU).

Settings, camera, then each entity (with its script) and its components' fields that differ
from their defaults, as TOML writes them; long lists are cut after whole items and long lines
wrap between fields. (The CLI lists the scripts after it, with where they resolve to.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emberfx.model.scene_fields import non_defaults, show

if TYPE_CHECKING:
    from emberfx.model.scene import Scene

__all__ = ["describe"]

WIDTH = 100        # summary lines wrap between fields beyond this many characters
VALUE_LIMIT = 72   # characters of one field's value before it is cut after a whole item

_CAMERA_FIELDS = {"perspective": ("position", "target", "fov_deg"),
                  "orthographic": ("center", "height")}
_CAMERA_EXTRAS = ("up", "near", "far", "fit", "reference_aspect")


def describe(scene: Scene) -> str:
    """The summary: settings (and the scene's script), camera, then each entity with its
    components and the fields that differ from their defaults."""
    s, cam = scene.settings, scene.camera
    lines = [f"scene '{s.name}'" + (f" ({scene.path})" if scene.path else ""),
             f"  size {s.size[0]}x{s.size[1]}, seed {s.seed}, fixed_dt {s.fixed_dt:g} s "
             f"({1.0 / s.fixed_dt:g} steps/s), background {s.background}"]
    if s.script:
        lines.append(f"  script {s.script} (scene-wide hooks)")
    shown = list(_CAMERA_FIELDS.get(cam.kind, ()))
    shown += [n for n, _ in non_defaults(cam) if n in _CAMERA_EXTRAS]
    lines += _wrapped(f"  camera {cam.kind}: ", [(n, getattr(cam, n)) for n in shown], "    ")
    count = len(scene.entities)
    lines.append(f"  {count} {'entity' if count == 1 else 'entities'}")
    for spec in scene.entities:
        lines.append(f"    {spec.name}" + (f" (script {spec.script})" if spec.script else ""))
        for key, comp in spec.components.items():
            changed = non_defaults(comp)
            if changed:
                lines += _wrapped(f"      {key}: ", changed, "        ")
            else:
                lines.append(f"      {key}: all defaults")
    return "\n".join(lines)


def _wrapped(head: str, items: list, indent: str) -> list[str]:
    """``head`` then the (field, value) items as "field=value, ...", a new line (starting with
    ``indent``) before an item that would pass WIDTH."""
    texts = [f"{name}={show(value, VALUE_LIMIT)}" for name, value in items]
    lines, line = [], head
    for index, text in enumerate(texts):
        piece = text + ("," if index < len(texts) - 1 else "")
        if line != head and len(line) + 1 + len(piece) > WIDTH:
            lines.append(line)
            line = indent + piece
        else:
            line += ("" if line == head else " ") + piece
    return lines + [line]
