"""The ``emitter`` component: what a scene file's ``[entity.emitter]`` table describes.

Kept apart from the system (systems/emitter/system.py) so that validating a scene needs no GPU code.
Its nested tables (``Shape``, ``Burst``, ``SubEmitter`` ...) are systems/emitter/tables.py's,
and importable from here as the component's parts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec

from emberfx.model.colors import parse_color
from emberfx.model.components import Tracked, live, passes, rebuild
from emberfx.model.registry import component
from emberfx.systems.emitter.emit_light import EmitLight
from emberfx.systems.emitter.expression_ranges import EXPRESSION_RANGES, constant_problem
from emberfx.systems.emitter.feeds import Feeds
from emberfx.systems.emitter.looks import Flipbook, check_texture_files
from emberfx.systems.emitter.mesh_shape import check_shape_file
from emberfx.systems.emitter.modifiers import (
    check_modifier_files,
    is_modifier_file,
    modifier_problem,
)
from emberfx.systems.emitter.neighbour_tables import Boids, ParticleCollision, switched_on_or_off
from emberfx.systems.emitter.tables import (
    EVENT_KINDS,
    MAX_CAPACITY,
    MAX_EVENT_LINKS,
    MAX_PREWARM_WORK,
    MIN_BURST_REPEAT,
    AgeSubEmitter,
    BirthRate,
    Burst,
    CollisionMaterial,
    ColorStop,
    Expression,
    Fraction,
    NonNegative,
    Range,
    Shape,
    SubEmitter,
    Vec3,
    as_range,
    check_finite,
    finite,
    finite_non_zero,
    finite_or_unset,
    finite_ordered,
    non_zero,
    numeric,
    ordered,
)
from emberfx.systems.forces.forces import MAX_FORCES
from emberfx.systems.meshes.obj import check_mesh_file
from emberfx.systems.meshes.shapes import mesh_problem

# the component's parts, as users and the other emitter modules import them from here
__all__ = ["EVENT_KINDS", "MAX_CAPACITY", "MAX_EVENT_LINKS", "MAX_PREWARM_WORK",
           "MIN_BURST_REPEAT", "AgeSubEmitter", "Burst", "CollisionMaterial", "ColorStop",
           "Emitter", "Feeds", "Shape", "SubEmitter", "as_range", "numeric", "sub_emitter_problem"]

DEFAULT_RATE = 1000.0
"""particles per second of an emitter whose scene sets no `rate` and that no event targets"""
DEFAULT_COLORS: list[str | ColorStop] = ["#ffd27f", "#ff6a00"]   # each emitter gets a copy


@component("emitter")
@dataclass(slots=True)
class Emitter(Tracked):
    capacity: Annotated[int, msgspec.Meta(ge=1, le=MAX_CAPACITY)] = rebuild(10000)
    """slots in the pool (reload: changing it rebuilds the pool)"""
    rate: BirthRate | None = live(None)
    """particles per second; the fractional part carries across steps. Unset: DEFAULT_RATE,
    or none for an emitter that some on_death / on_collision / on_age names (it then emits
    only from events, unless its scene sets `rate` or `bursts`)"""
    rate_over_distance: BirthRate = live(0.0)
    """extra particles per world unit the emitter's position moves"""
    bursts: list[Burst] = live(default_factory=list)
    lifetime: Range | Expression = live((1.0, 2.0))
    """seconds: a number or [min, max], or a WGSL expression evaluated at birth (a constant one
    must be > 0 as a number must; any other is clamped to >= 0, expression_ranges.py)"""
    speed: Range | Expression = live((1.0, 2.0))
    """initial speed, m/s: a number or [min, max], or a WGSL expression evaluated at birth
    (clamped to >= 0; a constant one below 0 is refused, expression_ranges.py)"""
    position: Vec3 = live((0.0, 0.0, 0.0))
    """the emitter's centre, world units (edit it live to move the emitter)"""
    shape: Shape = live(default_factory=Shape)
    direction: Vec3 = live((0.0, 1.0, 0.0))
    """axis of the emission cone (and of disk, cone and ring shapes)"""
    spread_deg: Annotated[float, msgspec.Meta(ge=0.0, le=180.0)] = live(15.0)
    """cone half-angle of initial directions around `direction`, degrees"""
    velocity: Literal["direction", "radial", "normal"] = live("direction")
    """initial direction: around `direction`, outward from the shape's centre, or along the
    surface normal of a mesh shape (shape.kind = "mesh", surface = true); `spread_deg` opens a
    cone around it"""
    inherit_velocity: Annotated[float, msgspec.Meta(ge=-1.0, le=1.0)] = live(0.0)
    """share of the emitter's own velocity (from its moving position) given to new particles"""
    prewarm: Annotated[float, msgspec.Meta(ge=0.0, le=60.0)] = rebuild(0.0)
    """seconds simulated when the emitter is created, so it starts in its steady state; the
    work, capacity x prewarm steps, is bounded by MAX_PREWARM_WORK (prewarm_problem)"""
    gravity: Vec3 = live((0.0, -9.81, 0.0))
    """m/s^2"""
    drag: NonNegative = live(0.0)
    """linear drag, 1/s"""
    size: Annotated[float, msgspec.Meta(gt=0.0)] | Expression = live(0.03)
    """billboard edge: world units, or pixels with size_unit = "pixels\"; or a WGSL expression
    evaluated per particle in the draw (age, lifetime, t, position, velocity, time, attributes),
    clamped to > 0 (a constant one <= 0 is refused, expression_ranges.py)"""
    size_unit: Literal["world", "pixels"] = live("world")
    size_curve: list[NonNegative] = live(default_factory=lambda: [1.0])
    """size multipliers over life, evenly spaced"""
    size_variation: Fraction = live(0.0)
    """per-particle random size factor in [1 - v, 1 + v]"""
    color: str | list[str | ColorStop] = live(default_factory=lambda: list(DEFAULT_COLORS))
    """a colour, a list of colours evenly spaced over life, or stops [{t, color}, ...]; or a
    WGSL file (relative to the scene) defining `fn color(p: ParticleState, ctx: ModifierContext)
    -> vec4f`, which replaces the colour over life"""
    alpha_curve: list[Fraction] = live(default_factory=lambda: [1.0])
    """opacity multipliers over life, evenly spaced (e.g. [1, 1, 0] fades out at the end)"""
    color_variation: Fraction = live(0.0)
    """per-particle random brightness factor in [1 - v, 1 + v]"""
    blend: Literal["additive", "alpha", "opaque"] = rebuild("additive")
    """alpha: premultiplied, drawn back to front (sorted on the GPU)"""
    texture: str = rebuild("dot")
    """the sprite's image: a file pillow reads (relative to the scene file), sampled in sRGB
    with a mip chain, or a built-in: "dot" (a soft round dot), "soft", "star", "smoke", "spark",
    "ring" (a thin circle)
    """
    flipbook: Flipbook | None = rebuild(None)
    """the texture as a grid of animation frames (systems/emitter/looks.py)"""
    align: Literal["camera", "velocity", "axis", "plane"] = live("camera")
    """camera: facing the camera; velocity / axis: along the velocity / `axis`, facing the
    camera across it; plane: lying flat, `axis` their normal (ripples on a floor) (world-unit
    sizes only)"""
    axis: Vec3 = live((0.0, 1.0, 0.0))
    """the world direction sprites lie along with align = "axis", or their normal with
    align = "plane\""""
    stretch: NonNegative = live(0.0)
    """seconds: align = "velocity" sprites are size + stretch x |v| long"""
    soft: NonNegative = rebuild(0.0)
    """world units: soft particles, whose alpha fades to 0 as they come within this depth of the
    opaque scene behind them (cloth, meshes, drawn colliders); 0: cut sharply where they meet it"""
    rotation_deg: tuple[float, float] = live((0.0, 0.0))
    """[min, max] random initial angle about the view axis (align = "camera") or about `axis`
    (align = "plane"), degrees"""
    angular_velocity_deg: tuple[float, float] = live((0.0, 0.0))
    """[min, max] random spin about the view axis (align = "camera") or about `axis`
    (align = "plane"), degrees per second"""
    mesh: str | None = rebuild(None)
    """draw particles as lit, opaque meshes instead of sprites: "cube", "sphere", "tetra" or a
    Wavefront .obj file (relative to the scene), `size` across; local +y along the velocity
    (align = "velocity") or `axis` (align = "axis" or "plane"), else turned about a random axis
    by `rotation_deg` and `angular_velocity_deg` (systems/meshes)"""
    allocation: Literal["ordered", "atomic", "ticket"] = rebuild("ordered")
    """how dead slots share a step's emission budget (reload); see "The emitter" in
    docs/architecture.md"""
    substeps: Annotated[int, msgspec.Meta(ge=1, le=64)] = live(1)
    """integration substeps per fixed step (h = fixed_dt / substeps)"""
    collision: CollisionMaterial | None = passes(None)
    """opt in to collisions with collider entities: the particles' material; None: particles
    pass through every collider"""
    affected_by: list[str] | None = passes(None)
    """names of the attractor / force_field / kill_zone / collider entities acting on it;
    None = all"""
    on_death: SubEmitter | None = live(None)
    """GPU events: each particle that dies spawns particles of another emitter (no CPU round
    trip; born at the end of the same step)"""
    on_collision: SubEmitter | None = live(None)
    """each particle that touches a collider in a step spawns particles of another emitter"""
    on_age: AgeSubEmitter | None = live(None)
    """each particle spawns particles of another emitter every `every` seconds of its age"""
    init: str | None = rebuild(None)
    """a WGSL file (relative to the scene) defining `fn init(p: ptr<function, ParticleState>,
    ctx: ModifierContext)`, run at every birth (systems/emitter/modifiers.py)"""
    update: str | None = rebuild(None)
    """a WGSL file defining `fn update(p: ptr<function, ParticleState>, ctx: ModifierContext)`,
    run each substep after the built-in forces and integration"""
    attributes: dict[str, Any] = rebuild(default_factory=dict)   # types checked in __post_init__
    """custom per-particle attributes, name -> f32 | i32 | u32 | vec2f | vec3f | vec4f: fields of
    ParticleState, zero at birth, in Engine.state(name) under their names"""
    neighbour_radius: Annotated[float, msgspec.Meta(ge=0.0)] = rebuild(0.0)
    """world units: how far the `update` modifier sees other particles of the emitter
    (neighbours(), next_neighbour(), neighbour_state(): docs/guides/neighbours.md); 0: none"""
    particle_collision: ParticleCollision | None = live(None)
    """particles as spheres that do not overlap (docs/guides/neighbours.md); turning it on or
    off rebuilds the pool, as its radius and iterations do"""
    boids: Boids | None = live(None)
    """Reynolds flocking among the emitter's particles (docs/guides/neighbours.md); turning it
    on or off rebuilds the pool, as its radius and bounds do"""
    feeds: Feeds | None = live(None)
    """feed a gas: each alive particle inside the gas's box adds `density`, `temperature` and
    `fuel` per second to the cell it lies in (docs/guides/gas.md); turning it on or off, or
    naming another gas, rebuilds the pool"""
    cast_shadows: bool = rebuild(False)
    """sprites cast shadows from the [light]: each particle's alpha x alpha over life x sprite
    coverage adds to the optical depth tau of the light's opacity layers, and what lies behind
    them gets exp(-tau) of the directional light (emitter/opacity.py); an emitter that casts
    runs alone, not batched. Mesh particles always cast"""
    receive_shadows: bool = rebuild(False)
    """sprites are lit by the [light] at their centre, shadowed: ambient + color x intensity x
    the light that reaches the centre past solids and casting particles (emitter/opacity.py);
    an emitter that receives runs alone, not batched"""
    emit_light: EmitLight | None = rebuild(None)
    """its brightest particles as point lights each render, chosen on the GPU: at each one's
    centre, its colour over life x alpha x intensity, fading to nothing at range (the
    [entity.point_light] falloff); at most max_lights of them (emitter/emit_light.py); an
    emitter that emits light runs alone, not batched"""

    # a neighbour table coming or going rebuilds the pool (its grid and passes); its own fields
    # say what an edit of them needs
    VALUE_CHANGES = {name: switched_on_or_off for name in ("particle_collision", "boids", "feeds")}
    PATH_FIELDS = ("init", "update", "color", "shape.path")   # color: only a .wgsl file
    REFERENCES = {"affected_by": ("attractor", "force_field", "kill_zone", "collider"),
                  "feeds.gas": ("gas",), "shape.layer": ("life",),
                  **{f"on_{kind}.emitter": ("emitter",) for kind in EVENT_KINDS}}
    # forces and colliders go to separate buffers of MAX_FORCES records each
    REFERENCE_LIMITS = {"affected_by": {("attractor", "force_field", "kill_zone"): MAX_FORCES,
                                        ("collider",): MAX_FORCES}}

    # The fields that no check of several fields reads, each with what __post_init__ asks of it
    # alone besides its type (None: nothing). A live edit of these fields only is checked field
    # by field (model/scene.validated_copy): scripts move emitters every step.
    CHECKED_ALONE = {"position": finite, "direction": finite_non_zero, "gravity": finite,
                     "rate": finite_or_unset, "rate_over_distance": None, "drag": finite,
                     "spread_deg": None, "inherit_velocity": None, "axis": finite_non_zero,
                     "stretch": finite, "size_variation": None, "color_variation": None,
                     "rotation_deg": finite_ordered, "angular_velocity_deg": finite_ordered,
                     "substeps": None}

    def __post_init__(self):
        if self.velocity == "normal" and (self.shape.kind != "mesh" or not self.shape.surface):
            raise ValueError(f'velocity: "normal" needs a mesh surface (shape.kind = "mesh", '
                             f'shape.surface = true), found shape.kind = "{self.shape.kind}"'
                             + (", surface = false" if self.shape.kind == "mesh" else ""))
        problem = mesh_problem(self)
        if problem is not None:
            raise ValueError(problem)
        problem = modifier_problem(self)   # expressions, attributes (modifiers.py)
        if problem is not None:
            raise ValueError(problem)
        for name in EXPRESSION_RANGES:   # a constant expression is checked as its number
            value = getattr(self, name)
            problem = constant_problem(name, value) if isinstance(value, str) else None
            if problem is not None:
                raise ValueError(f"{name}: {problem}")
        for name in ("lifetime", "speed"):
            if isinstance(getattr(self, name), str):
                continue
            lo, hi = as_range(getattr(self, name))
            check_finite(name, (lo, hi))
            if lo < 0.0:
                raise ValueError(f"{name}: expected values >= 0, found {getattr(self, name)}")
            if hi < lo:
                raise ValueError(f"{name}: expected [min, max] with min <= max, found [{lo}, {hi}]")
        if not isinstance(self.lifetime, str) and as_range(self.lifetime)[1] <= 0.0:
            raise ValueError(f"lifetime: expected a positive maximum, found {self.lifetime}")
        for name in ("position", "direction", "gravity", "rate", "drag", "size", "axis",
                     "stretch", "soft", "rotation_deg", "angular_velocity_deg"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                check_finite(name, getattr(self, name))
        for name in ("direction", "axis"):
            if not non_zero(getattr(self, name)):
                raise ValueError(f"{name}: expected a non-zero vector, found [0, 0, 0]")
        for name in ("rotation_deg", "angular_velocity_deg"):
            lo, hi = getattr(self, name)
            if not ordered((lo, hi)):
                raise ValueError(f"{name}: expected [min, max] with min <= max, found [{lo}, {hi}]")
        if self.soft > 0.0 and self.blend == "opaque":
            raise ValueError(f'soft: expected blend "additive" or "alpha" for soft particles '
                             f'(opaque sprites write depth), found soft = {self.soft} with '
                             f'blend "opaque"')
        if not self.size_curve:
            raise ValueError("size_curve: expected at least one value, found []")
        if not self.alpha_curve:
            raise ValueError("alpha_curve: expected at least one value, found []")
        self.color_stops()   # validates
        for index, burst in enumerate(self.bursts):
            if burst.count > self.capacity:
                raise ValueError(f"bursts[{index}].count: expected at most capacity "
                                 f"({self.capacity}), found {burst.count}")
            if burst.cycles == 0 and burst.repeat <= 0.0:
                raise ValueError(f"bursts[{index}].cycles: 0 (forever) needs repeat > 0")
        sends = [f"on_{kind}" for kind, _ in self.sub_emitters()]
        if sends and self.allocation != "ordered":
            # events are ranked in slot order and sent before the spawn pass reuses dead slots
            raise ValueError(f'allocation: expected "ordered" for an emitter that sends events '
                             f'({", ".join(sends)}), found "{self.allocation}"')

    def check_files(self, resolve) -> None:
        """The scene loader's check of `texture` and `flipbook` against the image (looks.py),
        of an OBJ `mesh` (systems/meshes/obj.py) and of the modifier files (modifiers.py)."""
        check_texture_files(self, resolve)
        check_mesh_file(self, resolve)
        check_shape_file(self.shape, resolve)
        check_modifier_files(self, resolve)

    def is_path(self, field: str, value) -> bool:
        """Whether ``value`` of PATH_FIELDS' ``field`` names a file: `color` does only as a
        .wgsl modifier."""
        return field != "color" or is_modifier_file(value)

    def sub_emitters(self) -> list[tuple[str, SubEmitter | AgeSubEmitter]]:
        """(kind, spawn) for each event kind this emitter sends, in EVENT_KINDS order."""
        return [(kind, spawn) for kind, spawn in zip(EVENT_KINDS, (self.on_death, self.on_collision,
                                                                  self.on_age))
                if spawn is not None]

    @classmethod
    def references_problem(cls, emitters: list[tuple[str, Emitter]]
                           ) -> tuple[str, str, str] | None:
        """(entity, field, why) for what the sub-emitter links among these emitters cannot be;
        the scene loader asks this once per scene (and for live edits and spawns)."""
        return sub_emitter_problem(emitters)

    def birth_rate(self, event_target: bool) -> float:
        """Particles per second: `rate`, or when unset DEFAULT_RATE, and none for an event
        target (which then emits from its events and the bursts its scene sets)."""
        if self.rate is not None:
            return self.rate
        return 0.0 if event_target else DEFAULT_RATE

    def prewarm_steps(self, fixed_dt: float) -> int:
        """Fixed steps the prewarm takes (the scene's timestep is not known to the component)."""
        return round(self.prewarm / fixed_dt)

    def prewarm_problem(self, fixed_dt: float) -> str | None:
        """Why this prewarm is too much work at ``fixed_dt``, with the numbers; None if it is
        not. The bound is on work, not seconds: a large pool may prewarm for less time."""
        steps = self.prewarm_steps(fixed_dt)
        work = self.capacity * steps
        if work <= MAX_PREWARM_WORK:
            return None
        longest = (MAX_PREWARM_WORK // self.capacity) * fixed_dt
        return (f"expected capacity x prewarm steps <= {MAX_PREWARM_WORK:,} particle-steps, found "
                f"{self.capacity:,} slots x {steps:,} steps ({self.prewarm:g} s at fixed_dt "
                f"{fixed_dt:g} s) = {work:,}; with this capacity prewarm at most {longest:.3g} s")

    def timestep_problem(self, fixed_dt: float) -> tuple[str, str] | None:
        """(field, why) for a value that is wrong only at the scene's ``fixed_dt``; the scene
        loader asks every component this, so ``validate`` refuses what the engine would."""
        problem = self.prewarm_problem(fixed_dt)
        if problem is not None:
            return ("prewarm", problem)
        if self.on_age is not None and self.on_age.every < fixed_dt:
            # the update marks at most one age event per particle per step
            return ("on_age.every", f"expected at least fixed_dt ({fixed_dt:g} s): a particle "
                                    f"sends at most one age event per step, found "
                                    f"{self.on_age.every:g}")
        return None

    def color_stops(self) -> list[tuple[float, str]]:
        """(t, '#rrggbb') stops sorted by t; evenly spaced when given as plain colours."""
        color = DEFAULT_COLORS if is_modifier_file(self.color) else self.color
        items = [color] if isinstance(color, str) else list(color)
        if not items:
            raise ValueError("color: expected at least one colour stop, found []")
        stops_given = [isinstance(i, ColorStop) for i in items]
        if any(stops_given) and not all(stops_given):
            raise ValueError("color: expected all plain colours or all {t, color} stops, "
                             "found a mix")
        if all(stops_given):
            stops = [(s.t, s.color) for s in items if isinstance(s, ColorStop)]   # all are
            ts = [t for t, _ in stops]
            if ts != sorted(ts):
                raise ValueError(f"color: expected stops sorted by t, found t = {ts}")
        else:
            n = len(items)
            stops = [(i / (n - 1) if n > 1 else 0.0, c) for i, c in enumerate(items)
                     if isinstance(c, str)]   # all are
        for _, c in stops:
            try:
                parse_color(c)
            except ValueError as exc:
                raise ValueError(f"color: {exc}") from None
        return stops


def event_links(emitters: list[tuple[str, Emitter]]) -> list[tuple[str, str, str]]:
    """(source, kind, target) for every sub-emitter link among ``emitters`` whose target is
    one of them, in source order, then EVENT_KINDS order."""
    names = {name for name, _ in emitters}
    return [(name, kind, spawn.emitter) for name, c in emitters
            for kind, spawn in c.sub_emitters() if spawn.emitter in names]


def sub_emitter_problem(emitters: list[tuple[str, Emitter]]) -> tuple[str, str, str] | None:
    """The first problem of the sub-emitter links among ``emitters`` (in their order) as
    (entity, field, why), or None: a target must allocate in slot order (events are born in
    ordered slots), take at most MAX_EVENT_LINKS links, and no chain may lead back to its
    start (a -> b -> a, or a -> a). A target that is not among them is the reference check's."""
    by_name = dict(emitters)
    links = event_links(emitters)
    incoming: dict[str, int] = {}
    for source, kind, target in links:
        where = f"emitter.on_{kind}.emitter"
        allocation = by_name[target].allocation
        if allocation != "ordered":
            return (source, where, f'expected an emitter with allocation = "ordered" (events '
                                   f"are born in slot order), found '{target}' with allocation "
                                   f'= "{allocation}"')
        incoming[target] = incoming.get(target, 0) + 1
        if incoming[target] > MAX_EVENT_LINKS:
            return (source, where, f"expected at most {MAX_EVENT_LINKS} event links (sources x "
                                   f"on_death / on_collision / on_age) naming one emitter, found "
                                   f"more naming '{target}'")
    following: dict[str, list[tuple[str, str]]] = {}
    for source, kind, target in links:
        following.setdefault(source, []).append((kind, target))
    done: set[str] = set()
    for start, _ in emitters:   # depth first from each emitter, in order
        path: list[str] = []
        on_path: set[str] = set()
        stack: list[tuple[str, int]] = [(start, 0)]
        while stack:
            name, index = stack.pop()
            if index == 0:
                if name in done:
                    continue
                path.append(name)
                on_path.add(name)
            edges = following.get(name, [])
            if index < len(edges):
                stack.append((name, index + 1))
                kind, target = edges[index]
                if target in on_path:
                    chain = " -> ".join([*path[path.index(target):], target])
                    return (name, f"emitter.on_{kind}.emitter",
                            f"expected sub-emitters without a cycle, found {chain}")
                if target not in done:
                    stack.append((target, 0))
            else:
                path.pop()
                on_path.discard(name)
                done.add(name)
    return None
