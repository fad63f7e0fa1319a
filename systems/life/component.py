"""The ``life`` component: a Life-like cellular automaton layer.

Kept apart from the system (systems/life/system.py) so that validating a scene needs no GPU code.
Rules and patterns are parsed by systems/life/rules.py and systems/life/patterns.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec

from emberfx.model.colors import check_colors
from emberfx.model.components import Tracked, live, passes, rebuild
from emberfx.model.prewarm import PrewarmSeconds, prewarm_problem, prewarm_steps
from emberfx.model.registry import component

MAX_SIDE = 1 << 20   # cells per side accepted by the scene format; the device refuses earlier
MAX_PREWARM_WORK = 1 << 36
"""cell-generations (cells x prewarm generations) one layer's prewarm may take before the first
frame (32 cells share a word, so a cell-generation is cheap: lavapipe on 2 CPU cores runs about 9G
a second with the sweep kernel): a 1024 x 1024 layer prewarms the full 60 s at 60 steps/s and
steps_per_frame 1 (3.8G), a 4096 x 4096 one 4,096 generations"""

Side = Annotated[int, msgspec.Meta(ge=1, le=MAX_SIDE)]
LIFE_LAYERS = "life_layers"
"""the notice the Life system announces once made: a read-only mapping of entity name to its
layer (systems/life/system.py LifeLayer), live, for the families that read a layer's state (an
emitter's Life shape: which of the pingpong buffers is current)"""


def pattern_origin(grid: tuple[int, int], pattern: tuple[int, int],
                   offset: tuple[int, int] | None) -> tuple[int, int]:
    """Where a pattern of size (w, h) puts its top-left cell on a grid of size (W, H): ``offset``
    (x, y), or centred. It must fit whole, without wrapping, even on a torus; otherwise a
    ValueError "pattern: ..." or "offset: ..." (the field to change)."""
    (W, H), (w, h) = grid, pattern
    if w > W or h > H:
        raise ValueError(f"pattern: expected a pattern that fits the {W}x{H} grid (size = "
                         f"[{W}, {H}]), found {w}x{h}")
    if offset is None:
        return (W - w) // 2, (H - h) // 2
    x, y = offset
    if x < 0 or y < 0 or x + w > W or y + h > H:
        raise ValueError(f"offset: expected (x, y) with the {w}x{h} pattern inside the {W}x{H} "
                         f"grid of size = [{W}, {H}] (0 <= x <= {W - w}, 0 <= y <= {H - h}), "
                         f"found {[x, y]}")
    return x, y


@component("life")
@dataclass(slots=True)
class Life(Tracked):
    size: tuple[Side, Side] = rebuild((256, 256))
    """cells: width, height (reload)"""
    rule: str = rebuild("B3/S23")
    """any Life-like rule: "B3/S23", "b36s23", or MCell "23/3" (reload)"""
    topology: Literal["torus", "dead"] = rebuild("torus")
    """torus wraps both edges; dead treats cells beyond the edges as dead (reload)"""
    memory: Literal["pingpong", "inplace"] = rebuild("pingpong")
    """two state buffers, or one updated in place through per-tile staging of the borders
    (half the memory) (reload)"""
    kernel: Literal["auto", "sweep", "sweep_neighbours", "quad", "word"] = rebuild("auto")
    """pingpong step kernel: "sweep" (several generations per dispatch, needs subgroups),
    "sweep_neighbours" (the same with the slower 8-neighbour count, a baseline), "quad" (one
    generation, widths that are multiples of 128) or "word" (one generation, any width); one that
    cannot run here falls back to the next; "auto": the fastest that runs (reload)"""
    pattern: str | None = rebuild(None)
    """.rle or .cells file, relative to the scene file (reload)"""
    offset: tuple[int, int] | None = rebuild(None)
    """where the pattern's top-left cell goes (x, y); default: centred (reload)"""
    density: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = rebuild(0.0)
    """random soup density when > 0, seeded by the scene seed (reload)"""
    soup: tuple[int, int, int, int] | None = rebuild(None)
    """rectangle (x, y, width, height) the soup fills; default: the whole grid (reload)"""
    steps_per_frame: Annotated[int, msgspec.Meta(ge=0, le=1024)] = passes(1)
    """generations per simulation step"""
    paused: bool = passes(False)
    alive_color: str = live("#00e676")
    dead_color: str = live("#151515")
    trail_color: str | None = passes(None)
    """colour recently dead cells fade from; None: no trail"""
    trail_fade: Annotated[float, msgspec.Meta(gt=0.0, lt=1.0)] = live(0.85)
    """trail brightness kept per simulation step (fixed_dt), so the trail is the same however
    often it is drawn; 0.9 keeps 0.9 ** 60 = 0.2% after one second at 60 steps a second"""
    display: Literal["fill", "quad"] = passes("fill")
    """"fill": cover the whole view (square cells, centred, the excess cropped), or "quad": draw
    as a quad in the world (quad_center, quad_size)"""
    quad_center: tuple[float, float, float] = live((0.0, 0.0, 0.0))
    quad_size: tuple[float, float] = live((4.0, 4.0))
    """world units; the quad lies in the x-y plane"""
    blend: Literal["opaque", "additive"] = passes("opaque")
    """"opaque": the image covers what is behind it; "additive": its colours add to what is
    behind (a black dead_color adds nothing, so a fractal or particles show through the dead
    cells), drawn after all opaque geometry, which hides it"""
    prewarm: PrewarmSeconds = rebuild(0.0)
    """seconds simulated when the layer is created: round(prewarm / fixed_dt) x steps_per_frame
    generations (none while paused); the work, cells x generations, is bounded by
    MAX_PREWARM_WORK"""

    PATH_FIELDS = ("pattern",)

    def __post_init__(self):
        from emberfx.systems.life.rules import parse_rule

        try:
            parse_rule(self.rule)
        except ValueError as exc:
            raise ValueError(f"rule: {exc}") from None
        check_colors(self, "alive_color", "dead_color", "trail_color")
        if self.memory == "inplace" and self.kernel != "auto":
            raise ValueError(f'kernel: expected "auto" with memory = "inplace" (the in-place '
                             f"step has one kernel), found '{self.kernel}'")
        if self.soup is not None:
            x, y, w, h = self.soup
            if w < 1 or h < 1 or x < 0 or y < 0 or x + w > self.size[0] or y + h > self.size[1]:
                raise ValueError(f"soup: expected a rectangle (x, y, width, height) inside the "
                                 f"{self.size[0]}x{self.size[1]} grid (size = {list(self.size)}), "
                                 f"found {list(self.soup)}")
        if self.pattern is not None and not self.pattern.lower().endswith((".rle", ".cells")):
            raise ValueError(f"pattern: expected a .rle or .cells file, found '{self.pattern}'")

    def generations_per_step(self) -> int:
        return 0 if self.paused else self.steps_per_frame

    def prewarm_steps(self, fixed_dt: float) -> int:
        return prewarm_steps(self.prewarm, fixed_dt)

    def timestep_problem(self, fixed_dt: float) -> tuple[str, str] | None:
        """(field, why) for a value that is wrong only at the scene's ``fixed_dt`` (the scene
        loader asks, so ``validate`` refuses what the engine would)."""
        (w, h), gens = self.size, self.generations_per_step()
        return prewarm_problem(
            self.prewarm, fixed_dt, per_step=w * h * gens,
            per_step_text=f"{w}x{h} cells x {gens} generations per step (steps_per_frame)",
            measure="cells x generations", limit=MAX_PREWARM_WORK, unit="cell-generations")

    def check_files(self, resolve) -> None:
        """What the engine checks before the upload, without a GPU (the scene loader calls it):
        the pattern file parses and fits the grid at ``offset``. ``resolve`` turns the path as
        written into a file path."""
        if self.pattern is None:
            return
        from emberfx.systems.life.patterns import PatternError, read_pattern

        try:
            pattern = read_pattern(resolve(self.pattern))
        except PatternError as exc:
            raise ValueError(f"pattern: {exc}") from None
        pattern_origin(self.size, pattern.size, self.offset)
