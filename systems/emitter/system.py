"""The Emitter system: a fixed-capacity particle pool with no free list.

Per step, for each emitter entity (all in one compute pass):
  CLEAR     <e>:emitter:clear          zero the ticket / born / alive counters (clear_buffer)
  SIMULATE  <e>:emitter:update         forces + semi-implicit Euler; dead slots: free mask and
                                       per-block free counts (ordered), or atomic budget/ticket
            <e>:emitter:free:scan:*    (ordered) prefix sum of the per-block free counts
            <e>:emitter:count          (ordered) per-block alive counts after births, by arithmetic
            <e>:emitter:alive:scan:*   prefix sum of per-block alive counts; total = alive count
            <e>:emitter:spawn          (ordered) births to the lowest free ranks + the alive list
            <e>:emitter:compact        (atomic, ticket) the alive list from the alive mask
  PREPARE   <e>:emitter:prepare        drawIndirect args: instance count = alive count
  RENDER    <e>:emitter:depth, :sort:* (alpha) alive list sorted back to front for this camera
            <e>:emitter:draw           camera-facing billboards through the alive list
  READBACK  <e>:emitter:readback       counters -> the engine's staging ring (read 1-2 steps later)

Free slots are kept as a bit mask (one bit per slot, 8 words per 256-slot block) plus a count per
block; a slot's rank is its block's scanned offset (emberfx.blocks.scan, shared) plus the set
bits before it in its block (countOneBits). The alive list is dense and in slot order in every mode.

Every buffer is a registry resource ``<e>/<key>`` that other families may bind by name:
``particles`` (one Particle per slot, emitter/types.wgsl; age >= lifetime means dead),
``alive_list`` (alive slots, dense), ``counters`` (Counters; ``alive`` is set in PREPARE) and
``draw_args`` (its instance count is the alive count after PREPARE). The scans' buffers are
named after what they scan (``<e>/block_alive:scan_sums0`` ...).

Allocation modes (the ``allocation`` field):
  "ordered" (default): the k-th free slot in slot order is born when k < budget. The born set is a
      function of the state alone, so runs replay byte for byte.
  "atomic": each free slot takes a unit of the budget with atomicSub and undoes an underflow.
  "ticket": each free slot takes a monotonic atomicAdd ticket, born while ticket < budget.
  The atomic modes give exact counts but which free slots win depends on scheduling, so states
  are reproducible only when the budget covers every free slot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import wgpu

from emberfx.blocks.scan import PrefixScan
from emberfx.blocks.sort import KeySort
from emberfx.blocks.sprites import sprite_pipeline, sprite_queue
from emberfx.blocks.textures import TextureError, sprite_sampler, sprite_texture
from emberfx.core import wgsl
from emberfx.core.errors import SceneError
from emberfx.core.frame_graph import Pass, Phase
from emberfx.core.layout import struct_dtype
from emberfx.core.readback import read_array, read_buffer
from emberfx.core.resources import BufferView
from emberfx.core.system import EntityRef, Priority, Readback, StepInfo, System
from emberfx.model.registry import set_system
from emberfx.systems.emitter import prewarm as emitter_prewarm
from emberfx.systems.emitter.attributes import attribute_arrays
from emberfx.systems.emitter.component import Emitter
from emberfx.systems.emitter.contacts import Contacts
from emberfx.systems.emitter.events import COUNTERS_CLEARED, EventWiring, check_links
from emberfx.systems.emitter.looks import SPRITE_LOOK, pack_sprite_look, textured
from emberfx.systems.emitter.modifiers import (
    Program,
    layout_signature,
    only_program_changed,
    program_key,
    reprogram,
)
from emberfx.systems.emitter.params import (
    BLOCK,
    BLOCK_WORDS,
    LOOKS,
    PARAMS,
    Births,
    bake_looks,
    pack_params,
)
from emberfx.systems.forces.forces import FORCE, FORCE_KEYS, MAX_FORCES, arrange, pack_forces
from emberfx.systems.meshes.draw import mesh_particle_passes, write_mesh_look

DRAW, DRAW_SOFT = "emitter/draw.wgsl", "emitter/draw_soft.wgsl"
UPDATE = "emitter/update.wgsl"
ALLOCATION_MODES = wgsl.enum_constants(UPDATE, "ALLOCATION")
COUNT_GROUP = wgsl.workgroup_size("emitter/count.wgsl")[0]   # blocks per count workgroup
DEPTH_GROUP = wgsl.workgroup_size("emitter/depth.wgsl")[0]   # alive entries per depth workgroup
PARTICLE = struct_dtype("emitter/types.wgsl", "Particle")
COUNTERS = struct_dtype("emitter/types.wgsl", "Counters")


@dataclass
class _Pool:
    """The GPU side of one emitter entity."""
    entity: EntityRef
    component: Emitter
    buffers: dict[str, BufferView]   # the registry's <entity>/<key> views, by key
    passes: list[Pass]
    readback: Readback   # the counters region the engine copies back each step
    births: Births = field(default_factory=Births)
    looks_key: tuple | None = None   # the curves last baked into the looks buffer
    param_record: np.ndarray = field(default_factory=lambda: np.zeros((), PARAMS))
    contacts: Contacts | None = None   # colliders and volumes its update binds
    # update passes built so far by variant (HAS_FORCES, SOLID_KINDS, HAS_VECTOR_FIELDS), and
    # the one in use
    updates: dict[tuple[bool, int, bool], Pass] = field(default_factory=dict)
    variant: tuple[bool, int, bool] = (False, 0, False)
    program: Program | None = None   # its modifiers, attributes and expressions (modifiers.py)
    texture: object = None           # the sprite texture's view the draw binds
    layout: tuple = ()               # modifiers.layout_signature when the pool was made

    def shader(self, base: str) -> str:
        """The shader pass ``base`` runs for this pool (specialised by its modifiers)."""
        return self.program.shader(base) if self.program is not None else base

    def program_bindings(self, base: str) -> dict:
        """What the pass ``base`` binds beyond the built-in (the attributes)."""
        return self.program.bindings(base, self.buffers) if self.program is not None else {}


class EmitterSystem(System):
    key = "emitter"
    priority = Priority.DYNAMICS

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.pools: dict[str, _Pool] = {}
        self.acting: tuple = ()   # _acting_signature() when the pools were last refreshed
        self.events = EventWiring(self)   # GPU events between pools (sub-emitters)

    def _scene_has_forces(self) -> bool:
        return bool(self.query(*FORCE_KEYS))

    def births_from_storage(self) -> bool:
        """Whether births read the params buffer through its storage binding: on software
        adapters, whose uniform inlining would recompile the birth passes at every dispatch
        (EmitterParams in emitter/types.wgsl); a GPU keeps its uniform loads."""
        return self.gpu.is_software

    def _draw_pipeline(self, component: Emitter, shader: str):
        soft = component.soft > 0.0
        fragment = ("fs_soft" if soft else "fs") + ("_textured" if textured(component) else "")
        return sprite_pipeline(self.device, shader, component.blend,
                               self.shared.scene_format, self.shared.depth_format, fragment)

    def _draw_pass(self, prefix: str, pool: _Pool) -> Pass:
        """The sprites' draw; soft ones read this frame's opaque depth, so they draw after
        every opaque draw, in a pass whose depth attachment is read-only."""
        component, texture, b = pool.component, pool.texture, pool.buffers
        soft = component.soft > 0.0
        shader = pool.shader(DRAW_SOFT if soft else DRAW)
        bindings = {"frame": "frame", "params": b["params"], "particles": b["particles"],
                    "alive_list": b["alive_list"], "looks": b["looks"],
                    "sprite_look": b["sprite_look"], "sprite_texture": texture,
                    "sprite_sampler": sprite_sampler(self.device),
                    **pool.program_bindings(DRAW_SOFT if soft else DRAW)}
        if soft:
            bindings["scene_depth"] = "scene/depth"
        return self.build.draw(f"{prefix}:draw", shader,
                               self._draw_pipeline(component, shader), bindings,
                               indirect=(b["draw_args"], 0), depth_read_only=soft,
                               order=sprite_queue(component.blend, component.soft))

    def _sprite_texture(self, name: str, component: Emitter):
        """The texture's view, uploaded with its mips; an unusable one is a SceneError."""
        try:
            return sprite_texture(self.device, component.texture, self.shared.resolve)
        except TextureError as exc:
            raise SceneError(self.shared.scene_path, str(exc), entity=name,
                             field="emitter.texture") from None

    # lifecycle ---------------------------------------------------------------------------------
    def add(self, entity: EntityRef, component: Emitter) -> None:
        n = component.capacity
        name = entity.name
        if name in self.pools:   # a failed in-place rebuild is followed by a fresh add
            self.detach(entity)
        problem = component.prewarm_problem(self.shared.fixed_dt)
        if problem is not None:
            raise SceneError(self.shared.scene_path, problem, entity=name, field="emitter.prewarm")
        check_links(self, entity, component)
        texture = self._sprite_texture(name, component)   # before any resource: it may refuse
        program = self._program(entity, component)           # compiled: it may refuse too
        blocks = math.ceil(n / BLOCK)
        self.gpu.check_buffer_size(n * PARTICLE.itemsize,
                                   f"entity '{name}': emitter.capacity = {n:,} "
                                   f"({PARTICLE.itemsize} bytes per particle)")
        ordered = component.allocation == "ordered"
        births_from_storage = self.births_from_storage()
        storage = wgpu.BufferUsage.STORAGE
        params_usage = wgpu.BufferUsage.UNIFORM
        if births_from_storage:   # the birth passes read it as storage too (birth_params)
            params_usage |= storage
        sizes = {
            "params": (PARAMS.itemsize, params_usage),
            "particles": (n * PARTICLE.itemsize, storage),
            "counters": (COUNTERS.itemsize, storage),
            "block_alive": (blocks * 4, storage),
            "alive_list": (n * 4, storage),
            "draw_args": (16, storage | wgpu.BufferUsage.INDIRECT),
            "looks": (LOOKS.itemsize, storage),
            # storage, not uniform: lavapipe recompiles a shader whose branches read uniforms
            # at every bind (WGPU_NOTES), and the draw branches on the look
            "sprite_look": (SPRITE_LOOK.itemsize, storage),
            "forces": (MAX_FORCES * FORCE.itemsize, storage),
            **EventWiring.buffer_sizes(component),
        }
        if program.dtype is not None:
            sizes["attributes"] = (n * program.dtype.itemsize, storage)
            self.gpu.check_buffer_size(n * program.dtype.itemsize,
                                       f"entity '{name}': emitter.attributes for {n:,} slots "
                                       f"({program.dtype.itemsize} bytes per particle)")
        if component.blend == "alpha":
            sizes["sort_keys"] = (n * 4, storage)
        if ordered:
            sizes["free_mask"] = (blocks * BLOCK_WORDS * 4, storage)
            sizes["block_free"] = (blocks * 4, storage)
        else:
            sizes["alive_mask"] = (blocks * BLOCK_WORDS * 4, storage)
        if not births_from_storage:
            # birth_params is never read here: a placeholder keeps the params to one usage
            # (bound as both uniform and storage, it cost an H200 ~0.4 us a step)
            sizes["birth_placeholder"] = (PARAMS.itemsize, storage)
        # published in the registry as <entity>/<key>: a trail binds <entity>/particles
        b = {key: self.buffer(entity, key, size, usage) for key, (size, usage) in sizes.items()}
        grid = self.gpu.grid(blocks)
        prefix = f"{name}:emitter"
        compute = self.build.compute
        alive_scan = PrefixScan(self.build, f"{prefix}:alive", b["block_alive"], blocks)
        contacts = Contacts(self, entity)
        counters = b["counters"]
        pool = _Pool(entity, component, b, [], contacts=contacts,
                     readback=Readback(name, "emitter", counters.name, counters.buffer,
                                       counters.offset, COUNTERS.itemsize))
        pool.program, pool.texture = program, texture
        pool.layout = layout_signature(component, self.shared.resolve)
        self.events.attach(pool)
        pool.variant = self._variant(pool)
        update = pool.updates[pool.variant] = self._update_pass(pool)
        passes = [self.build.clear(f"{prefix}:clear", Phase.CLEAR, b["counters"], 4,
                                   COUNTERS_CLEARED - 4),
                  update]
        if ordered:
            # free ranks -> alive counts per block -> alive ranks; then one pass gives births and
            # writes the alive list (emitter/count.wgsl and spawn.wgsl explain the arithmetic)
            free_scan = PrefixScan(self.build, f"{prefix}:free", b["block_free"], blocks)
            passes += free_scan.passes()
            passes.append(compute(
                f"{prefix}:count", Phase.SIMULATE, "emitter/count.wgsl",
                (math.ceil(blocks / COUNT_GROUP), 1, 1),
                {"params": b["params"], "free_offset": b["block_free"],
                 "free_total": free_scan.total, "block_alive": b["block_alive"],
                 "counters": b["counters"]}))
            passes += alive_scan.passes()
            passes.append(self.events.spawn_pass(pool, birth_binding(b), births_from_storage))
        else:
            passes += alive_scan.passes()
            passes.append(compute(
                f"{prefix}:compact", Phase.SIMULATE, "emitter/compact.wgsl", grid,
                {"params": b["params"], "alive_mask": b["alive_mask"],
                 "block_alive_offset": b["block_alive"], "alive_list": b["alive_list"]}))
        if component.blend == "alpha":   # back to front, by this frame's camera
            passes.append(compute(
                f"{prefix}:depth", Phase.RENDER, "emitter/depth.wgsl",
                self.gpu.grid(math.ceil(n / DEPTH_GROUP)),
                {"frame": "frame", "particles": b["particles"], "alive_list": b["alive_list"],
                 "alive_total": alive_scan.total, "keys": b["sort_keys"]}))
            sort = KeySort(self.build, prefix, b["sort_keys"], b["alive_list"], n,
                           count=(alive_scan.total, 0))
            passes += sort.passes(Phase.RENDER)
        passes += [
            compute(f"{prefix}:prepare", Phase.PREPARE, "emitter/prepare.wgsl", (1, 1, 1),
                    {"counters": b["counters"], "alive_total": alive_scan.total,
                     "draw_args": b["draw_args"]}),
            self._draw_pass(prefix, pool),
        ]
        if component.mesh is not None:   # the mesh family draws these particles, not sprites
            passes = [p for p in passes if p.name != f"{prefix}:draw"]
            passes += mesh_particle_passes(self, entity, component, b)
        pool.passes = passes
        self.pools[name] = pool
        self.resources.write(b["params"], pack_params(
            pool.param_record, component, entity=entity.index, frame=0, seed=0, dt=0.0, budget=0,
            force_count=0))
        self.resources.write(b["looks"], bake_looks(component))
        self.resources.write(b["sprite_look"], pack_sprite_look(component))
        if component.prewarm > 0.0:
            emitter_prewarm.prewarm(self, pool)

    def _update_pass(self, pool: _Pool) -> Pass:
        """The update marks free slots (ordered: births come in spawn) or, having spawned itself
        (atomic, ticket), the final alive slots. What nothing acts with is compiled out:
        forces without force entities (HAS_FORCES; much faster on CPU backends), collisions
        without a collision material and colliders (HAS_COLLISIONS), the code of collider
        kinds that do not act on it (SOLID_KINDS, emitter/collide.wgsl says why) and vector
        field sampling without vector fields (HAS_VECTOR_FIELDS)."""
        component, b = pool.component, pool.buffers
        has_forces, solid_kinds, has_fields = pool.variant
        ordered = component.allocation == "ordered"
        marks = ("free_mask", "block_free") if ordered else ("alive_mask", "block_alive")
        assert pool.contacts is not None
        return self.build.compute(
            f"{pool.entity.name}:emitter:update", Phase.SIMULATE, pool.shader(UPDATE),
            self.gpu.grid(math.ceil(component.capacity / BLOCK)),
            {"params": b["params"], "particles": b["particles"], "counters": b["counters"],
             "mask": b[marks[0]], "block_count": b[marks[1]], "forces": b["forces"],
             "birth_params": birth_binding(b), **pool.contacts.bindings(),
             **self.events.update_bindings(pool), **pool.program_bindings(UPDATE)},
            constants={"ALLOCATION": ALLOCATION_MODES[component.allocation],
                       "HAS_FORCES": has_forces, "HAS_COLLISIONS": solid_kinds != 0,
                       "SOLID_KINDS": solid_kinds, "HAS_VECTOR_FIELDS": has_fields,
                       "BIRTHS_FROM_STORAGE": self.births_from_storage(),
                       **self.events.update_constants(pool)})

    def _program(self, entity: EntityRef, component: Emitter) -> Program:
        """The emitter's modifiers, attributes and expressions, compiled (SceneError if not)."""
        return Program(component, self.shared.resolve, entity.name,
                       self.shared.scene_path).compiled(self.device)

    def rebuild(self, entity: EntityRef, component: Emitter) -> None:
        """A rebuild that only the modifiers need (a watched modifier file changed, or
        `init` / `update` was edited) recompiles in place: the particles stay, and a program
        that does not compile raises a SceneError while the last good one keeps running."""
        pool = self.pools.get(entity.name)
        if pool is None or not only_program_changed(pool.layout, component, self.shared.resolve):
            super().rebuild(entity, component)
            return
        reprogram(self, pool, self._program(entity, component))
        pool.layout = layout_signature(component, self.shared.resolve)

    def replace_spawn(self, pool: _Pool) -> None:
        """A new spawn pass for the pool (its event links changed: events.py)."""
        at = next(i for i, p in enumerate(pool.passes) if p.name.endswith(":emitter:spawn"))
        pool.passes[at] = self.events.spawn_pass(pool, birth_binding(pool.buffers),
                                                 self.births_from_storage())

    def _variant(self, pool: _Pool) -> tuple[bool, int, bool]:
        assert pool.contacts is not None
        fields = any(getattr(f, "kind", None) == "vector_field" for f in self.forces_on(pool))
        return (self._scene_has_forces(), pool.contacts.solid_kinds(pool.component), fields)

    def _refresh(self, pool: _Pool) -> None:
        """Bring the pool's update pass up to date: the variant for what acts on it now, bound
        to the volumes buffer that holds what it samples (remade when it grew)."""
        assert pool.contacts is not None
        if pool.contacts.refresh(pool.component, self.forces_on(pool)):
            pool.updates.clear()   # they bound the old volumes buffer
        variant = self._variant(pool)
        current = next((i for i, p in enumerate(pool.passes)
                        if p.name.endswith(":emitter:update")), None)
        update = pool.updates.get(variant)
        if update is None:
            pool.variant = variant
            update = pool.updates[variant] = self._update_pass(pool)
        pool.variant = variant
        if current is not None:
            pool.passes[current] = update

    def world_changed(self) -> None:
        """Entities were spawned or deleted, or a volume changed: each pool's update pass is
        the variant for what acts on it now (a spawn costs the same in a world of any size
        when nothing new acts on the pools)."""
        signature = self._acting_signature()
        if signature != self.acting:   # a collider or vector field came or went
            self.acting = signature
            for pool in self.pools.values():
                self._refresh(pool)
        self.events.refresh()   # sub-emitter links: a pool came, went or was rebuilt

    def _acting_signature(self) -> tuple:
        """What the pools' update passes depend on beyond their own components: the collider
        components, whether any force acts, and the vector fields' samples."""
        fields = self.shared.system_for("force_field")
        return (tuple((id(c), c.shape, c.sdf, c.sdf_kind) for _, c in self.query("collider")),
                self._scene_has_forces(), getattr(fields, "version", 0))

    def targets_changed(self) -> None:
        """New render targets: update passes bind the new "scene/depth"."""
        for pool in self.pools.values():
            pool.updates.clear()
            self._refresh(pool)

    def burst(self, entity: EntityRef, count: int) -> None:
        """`count` extra births on the next step (scripts: ctx.burst)."""
        self.pools[entity.name].births.extra += count

    def remove(self, entity: EntityRef) -> None:
        del self.pools[entity.name]   # the registry releases its buffers, scans' included
        self.events.forget(entity.name)

    # per frame ---------------------------------------------------------------------------------
    def passes(self) -> list[Pass]:
        for pool in self.pools.values():   # a live edit of `collision` changes the variant
            self._refresh(pool)
        self.events.refresh()
        # sources before their targets, each source's event passes after its update
        return [p for pool in self.events.ordered() for p in self.events.with_events(pool)]

    def readbacks(self) -> list[Readback]:
        return [pool.readback for pool in self.pools.values()]

    def readbacks_of(self, entity: EntityRef) -> list[Readback]:
        pool = self.pools.get(entity.name)
        return [pool.readback] if pool is not None else []

    def before_step(self, step: StepInfo) -> None:
        in_scene = self.query(*FORCE_KEYS)   # once for all pools
        for pool in self.pools.values():
            assert pool.program is not None
            if program_key(pool.component) != pool.program.key:
                # a live edit made a field an expression or a colour modifier (or not): a
                # SceneError here makes the step undo the edit
                reprogram(self, pool, self._program(pool.entity, pool.component))
            self._upload_step(pool, step, in_scene=in_scene)

    def _upload_step(self, pool: _Pool, step: StepInfo, start: float | None = None,
                     in_scene: list | None = None) -> None:
        c = pool.component
        start = step.frame * step.dt if start is None else start
        params, forces, budget = self._step_uniforms(pool, step, start, in_scene)
        write, b = self.resources.write, pool.buffers
        if pool.contacts is not None:
            pool.contacts.write_step(c, self.forces_on(pool, in_scene))
        write(b["forces"], forces)
        write(b["params"], params)
        write(b["sprite_look"], pack_sprite_look(c, pool.param_record))
        if "mesh_look" in b:
            write_mesh_look(self, b, c, pool.param_record)
        looks_key = (repr(c.color), tuple(c.alpha_curve), tuple(c.size_curve))
        if looks_key != pool.looks_key:   # rebake only when the curves change (a live edit)
            write(b["looks"], bake_looks(c))
            pool.looks_key = looks_key
        write(b["counters"], budget)   # the budget word; the clear pass zeroes the rest
        self.events.write_inbox(pool, int(np.frombuffer(budget, np.uint32)[0]))

    def _step_uniforms(self, pool: _Pool, step: StepInfo, start: float,
                       in_scene: list | None = None) -> tuple[bytes, bytes, bytes]:
        """One step's bytes for the params uniform, the forces array and the budget word of
        the counters, for the step covering [start, start + dt) seconds (this advances the
        emitter's birth bookkeeping). ``in_scene``: the scene's force entities, when known."""
        c = pool.component
        budget, velocity = pool.births.step(c, start, step.dt,
                                            self.events.is_target(pool.entity.name))
        forces, accelerate_end, kill_start = arrange(self.forces_on(pool, in_scene)[:MAX_FORCES])
        params = pack_params(
            pool.param_record, c, entity=pool.entity.index, frame=step.frame, seed=step.seed,
            dt=step.dt, budget=budget, force_count=len(forces), velocity=velocity,
            accelerate_end=accelerate_end, kill_start=kill_start, time=start)
        volumes = pool.contacts.volume_index if pool.contacts is not None else {}
        return (params, pack_forces(forces, step.frame * step.dt, volumes).tobytes(),
                np.array([budget], np.uint32).tobytes())

    def forces_on(self, pool: _Pool, in_scene: list | None = None) -> list:
        """The force components acting on this emitter, in scene order."""
        wanted = pool.component.affected_by
        if in_scene is None:
            in_scene = self.query(*FORCE_KEYS)
        return [comp for ref, comp in in_scene if wanted is None or ref.name in wanted]

    # inspection --------------------------------------------------------------------------------
    def state(self, entity: EntityRef) -> dict[str, np.ndarray]:
        pool = self.pools[entity.name]
        rows = read_array(self.device, pool.buffers["particles"], PARTICLE, pool.component.capacity)
        position_age, velocity_lifetime = rows["position_age"], rows["velocity_lifetime"]
        age, lifetime = position_age[:, 3].copy(), velocity_lifetime[:, 3].copy()
        out = {
            "position": np.ascontiguousarray(position_age[:, :3]),
            "velocity": np.ascontiguousarray(velocity_lifetime[:, :3]),
            "age": age,
            "lifetime": lifetime,
            "alive": age < lifetime,
        }
        dtype = pool.program.dtype if pool.program is not None else None
        if dtype is not None:   # custom attributes, each its own array
            out.update(attribute_arrays(dtype, read_array(
                self.device, pool.buffers["attributes"], dtype, pool.component.capacity)))
        return out

    def counters(self, entity: EntityRef) -> dict:
        """Blocking read of the counters (per-kind event counts as lists) and draw args (tests
        and debugging)."""
        pool = self.pools[entity.name]
        counters = np.frombuffer(read_buffer(self.device, pool.buffers["counters"],
                                             COUNTERS.itemsize), COUNTERS)[0]
        args = np.frombuffer(read_buffer(self.device, pool.buffers["draw_args"], 16), np.uint32)
        out = {name: counters[name].tolist() for name in COUNTERS.names or ()}
        out["draw_vertices"], out["draw_instances"] = int(args[0]), int(args[1])
        out["step_budget"] = pool.births.last_budget
        return out

    def alive_list(self, entity: EntityRef) -> np.ndarray:
        """Blocking read of the compacted alive list (the draw's instances), alive-count long."""
        pool = self.pools[entity.name]
        count = self.counters(entity)["alive"]
        return read_array(self.device, pool.buffers["alive_list"], np.uint32, count)

    def stats(self, entity: EntityRef, readback: dict[str, bytes]) -> dict:
        data = readback.get(entity.name)
        pool = self.pools[entity.name]
        out = {"capacity": pool.component.capacity}
        if data is not None:
            counters = np.frombuffer(data, COUNTERS)[0]
            out.update(alive=int(counters["alive"]), born=int(counters["born"]),
                       **self.events.stats(pool, counters))
        return out

    def script_events(self, readback: dict[str, bytes]) -> list[tuple[str, dict]]:
        return self.events.script_events(readback)


set_system("emitter", EmitterSystem)


def birth_binding(buffers: dict[str, BufferView]) -> BufferView:
    """What ``birth_params`` of the birth passes gets: the params buffer, or on a GPU, which
    never reads it, the placeholder."""
    return buffers.get("birth_placeholder", buffers["params"])

