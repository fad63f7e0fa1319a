"""What scripts and the mouse can do with Life layers: ``ctx.paint(layer, cells, alive=True)``
and painting with the left mouse button (Shift erases) on the topmost layer under the cursor."""

from __future__ import annotations

from emberfx.model.registry import pointer_tool, script_action
from emberfx.systems.life.system import cells_on_line


@script_action("paint")
def paint(engine, layer: str, cells, alive: bool = True) -> None:
    """Set Life cells ((x, y) pairs, row 0 at the top) alive or dead in that layer now."""
    engine.system_of(layer, "life").paint(engine.entity_ref(layer), cells, alive=alive)


class LifeStroke:
    """One drag of the paint tool: every cell the cursor crossed on one layer."""

    def __init__(self, engine, system, ref, life, cell: tuple[int, int], alive: bool):
        self.engine, self.system, self.ref, self.life = engine, system, ref, life
        self.alive = alive
        self.last_cell: tuple[int, int] | None = cell
        system.paint(ref, [cell], alive=alive)

    def drag(self, x: float, y: float, viewport) -> None:
        cell = self.system.cell_under(self.ref, self.life, self.engine.camera, x, y, viewport)
        if cell is not None:
            # a fast drag moves several cells per event: fill the stroke between them
            start = self.last_cell if self.last_cell is not None else cell
            self.system.paint(self.ref, cells_on_line(start, cell), alive=self.alive)
        self.last_cell = cell


class LifePaintTool:
    def press(self, engine, x: float, y: float, viewport, modifiers=()) -> LifeStroke | None:
        """A stroke on the topmost Life layer under the cursor, or None."""
        for ref, life in reversed(engine.entities_with("life")):
            system = engine.system_of(ref.name, "life")
            cell = system.cell_under(ref, life, engine.camera, x, y, viewport)
            if cell is not None:
                return LifeStroke(engine, system, ref, life, cell, alive="Shift" not in modifiers)
        return None


pointer_tool(LifePaintTool())
