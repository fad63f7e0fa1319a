"""Mouse gestures on a running Engine: camera orbit/pan/zoom and the pointer tools families
register (runtime/model/registry.py: Life painting, attractors that follow the mouse).

The window turns rendercanvas pointer events into calls on ``Pointer``; nothing here knows about
windows, so tests drive it with plain coordinates. Coordinates are logical pixels with (0, 0) at
the top-left of a viewport of ``(width, height)`` logical pixels.

Gestures (what a Blender, Unity or Godot user reaches for first):

- left drag: goes to the first registered tool that has something under the cursor (Life:
  paints live cells, Shift+drag erases); otherwise it orbits a perspective camera around its
  target, or pans an orthographic one;
- right or middle drag: pans; the wheel zooms toward the cursor;
- every move goes to the tools' ``hover`` (attractors with ``follow_mouse = true``).
"""

from __future__ import annotations

from emberfx.model.registry import pointer_tools

LEFT, RIGHT, MIDDLE = 1, 2, 3
WHEEL_UNIT = 100.0   # rendercanvas reports one wheel notch as 100


class Pointer:
    def __init__(self, engine):
        self.engine = engine
        self.gesture: str | None = None      # "orbit", "pan" or "tool" while dragging
        self.last: tuple[float, float] | None = None
        self.stroke = None                   # a pointer tool's stroke while gesture == "tool"

    # events --------------------------------------------------------------------------------
    def down(self, x: float, y: float, button: int, viewport, modifiers=()) -> None:
        self.last = (x, y)
        if button == LEFT:
            for tool in pointer_tools():
                self.stroke = tool.press(self.engine, x, y, viewport, tuple(modifiers))
                if self.stroke is not None:
                    self.gesture = "tool"
                    return
            self.gesture = "orbit" if self.engine.camera.kind == "perspective" else "pan"
        elif button in (RIGHT, MIDDLE):
            self.gesture = "pan"

    def move(self, x: float, y: float, viewport) -> None:
        self._hover(x, y, viewport)
        if self.gesture is None or self.last is None:
            self.last = (x, y)
            return
        dx, dy = x - self.last[0], y - self.last[1]
        self.last = (x, y)
        camera = self.engine.camera
        if self.gesture == "orbit":
            camera.orbit(dx, dy, viewport)
        elif self.gesture == "pan":
            camera.pan(dx, dy, viewport)
        else:
            assert self.stroke is not None   # a tool gesture holds its stroke
            self.stroke.drag(x, y, viewport)

    def up(self, x: float | None = None, y: float | None = None, viewport=None) -> None:
        """End the drag; given the release position, the drag first moves there. A drag's last
        moves may come after its release: jupyter_rfb holds a move up to 20 ms (it sends the
        newest of a burst) but sends the release at once, so a quick flick would otherwise end
        before it moved."""
        if self.gesture is not None and x is not None and y is not None and (x, y) != self.last:
            self.move(x, y, viewport)
        self.gesture, self.stroke = None, None

    def wheel(self, dy: float, x: float, y: float, viewport) -> None:
        self.engine.camera.zoom(-dy / WHEEL_UNIT, viewport, cursor=(x, y))

    # helpers -------------------------------------------------------------------------------
    def _hover(self, x, y, viewport) -> None:
        for tool in pointer_tools():
            hover = getattr(tool, "hover", None)
            if hover is not None:
                hover(self.engine, x, y, viewport)
