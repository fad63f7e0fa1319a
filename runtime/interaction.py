"""Mouse gestures on a running Engine: camera orbit/pan/zoom, painting Life cells, follow_mouse.

The window turns rendercanvas pointer events into calls on ``Pointer``; nothing here knows about
windows, so tests drive it with plain coordinates. Coordinates are logical pixels with (0, 0) at
the top-left of a viewport of ``(width, height)`` logical pixels.

Gestures (what a Blender, Unity or Godot user reaches for first):

- left drag: paints live cells when it starts over a Life layer (Shift+drag erases); otherwise it
  orbits a perspective camera around its target, or pans an orthographic one;
- right or middle drag: pans; the wheel zooms toward the cursor;
- attractors with ``follow_mouse = true`` sit under the cursor, in the plane through their current
  position that faces the camera.
"""

from __future__ import annotations

LEFT, RIGHT, MIDDLE = 1, 2, 3
WHEEL_UNIT = 100.0   # rendercanvas reports one wheel notch as 100


class Pointer:
    def __init__(self, engine):
        self.engine = engine
        self.gesture: str | None = None      # "orbit", "pan", "paint" or "erase" while dragging
        self.last: tuple[float, float] | None = None
        self.layer: tuple | None = None      # (EntityRef, Life component) being painted
        self.last_cell: tuple[int, int] | None = None

    # events --------------------------------------------------------------------------------
    def down(self, x: float, y: float, button: int, viewport, modifiers=()) -> None:
        self.last = (x, y)
        if button == LEFT:
            hit = self._life_under(x, y, viewport)
            if hit is not None:
                self.layer, cell = hit
                self.gesture = "erase" if "Shift" in modifiers else "paint"
                self._paint([cell])
                self.last_cell = cell
                return
            self.gesture = "orbit" if self.engine.camera.kind == "perspective" else "pan"
        elif button in (RIGHT, MIDDLE):
            self.gesture = "pan"

    def move(self, x: float, y: float, viewport) -> None:
        self._follow(x, y, viewport)
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
            assert self.layer is not None   # a paint or erase gesture holds its layer
            ref, life = self.layer
            cell = self._system().cell_under(ref, life, camera, x, y, viewport)
            if cell is not None:
                from emberfx.systems.life import cells_on_line

                # a fast drag moves several cells per event: fill the stroke between them
                start = self.last_cell if self.last_cell is not None else cell
                self._paint(cells_on_line(start, cell))
            self.last_cell = cell

    def up(self) -> None:
        self.gesture, self.layer, self.last_cell = None, None, None

    def wheel(self, dy: float, x: float, y: float, viewport) -> None:
        self.engine.camera.zoom(-dy / WHEEL_UNIT, viewport, cursor=(x, y))

    # helpers -------------------------------------------------------------------------------
    def _system(self):
        assert self.layer is not None   # called while painting only
        ref, _ = self.layer
        return self.engine.system_of(ref.name, "life")

    def _life_under(self, x, y, viewport):
        """The topmost Life layer under the cursor and the cell hit, or None."""
        for ref, life in reversed(self.engine.entities_with("life")):
            cell = self.engine.system_of(ref.name, "life").cell_under(
                ref, life, self.engine.camera, x, y, viewport)
            if cell is not None:
                return (ref, life), cell
        return None

    def _paint(self, cells) -> None:
        assert self.layer is not None   # called while painting only
        ref, _ = self.layer
        self._system().paint(ref, cells, alive=self.gesture == "paint")

    def _follow(self, x, y, viewport) -> None:
        for _, attractor in self.engine.entities_with("attractor"):
            if attractor.follow_mouse:
                point = self.engine.camera.view_plane_point(x, y, viewport, attractor.position)
                attractor.position = tuple(float(v) for v in point)
