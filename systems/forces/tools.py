"""What the mouse does with forces: attractors with ``follow_mouse = true`` sit under the cursor,
in the plane through their current position that faces the camera."""

from __future__ import annotations

from emberfx.model.registry import pointer_tool


class FollowMouseTool:
    def press(self, engine, x: float, y: float, viewport, modifiers=()) -> None:
        return None   # never takes a drag: following is hover only

    def hover(self, engine, x: float, y: float, viewport) -> None:
        for _, attractor in engine.entities_with("attractor"):
            if attractor.follow_mouse:
                point = engine.camera.view_plane_point(x, y, viewport, attractor.position)
                attractor.position = tuple(float(v) for v in point)


pointer_tool(FollowMouseTool())
