"""The Emitter system: fixed-capacity particle pools with no free list.

Like emitters run as one batch (batches.py: shared arenas, one dispatch per pass for all); any
other emitter runs alone, as a batch of one over its own buffers. Per step, for each batch
(``<b>`` is the batch, or the entity that runs alone), all in one compute pass:
  SIMULATE  <b>:emitter:update         forces + semi-implicit Euler; dead slots: free mask and
                                       per-block free counts (ordered), or atomic budget/ticket
            <b>:emitter:free:scan:*    (ordered) prefix sum of the per-block free counts
            <b>:emitter:count          (ordered) per-block alive counts after births, by arithmetic
            <b>:emitter:alive:scan:*   prefix sum of per-block alive counts
            <b>:emitter:spawn          (ordered) births to the lowest free ranks + the alive list
            <b>:emitter:compact        (atomic, ticket) the alive list from the alive mask
  PREPARE   <b>:emitter:prepare        per emitter: drawIndirect args, alive count, counters.alive
The ordered step takes fewer passes where it can (passes.py): update, ranks (one workgroup: the
free scan, births per emitter, draw args) and spawn; or, on adapters that keep resident
workgroups running, for an emitter alone without events, update (emitter/update_ranked.wgsl:
ranks by decoupled look-back, the alive list, draw args) and births. Every path gives the same
bytes. And for each emitter entity <e>:
  RENDER    <e>:emitter:depth, :sort:* (alpha) alive list sorted back to front for this camera
            <e>:emitter:draw           camera-facing billboards through the alive list
  READBACK  the counters region (a batch's: one for all members) -> the engine's gather pass,
            scene:frame:readback, then its staging ring (read 1-2 steps later); the only
            region of a scene goes to the ring directly
The host writes each emitter's counters with the step's budget and zero counts (no clear pass).

Free slots are kept as a bit mask (one bit per slot, 8 words per 256-slot block) plus a count per
block; a slot's rank is its block's scanned offset (emberfx.blocks.scan, shared) plus the set
bits before it in its block (countOneBits). The alive list is dense and in slot order in every mode.

Every buffer is a registry resource ``<e>/<key>`` that other families may bind by name:
``particles`` (one Particle per slot, emitter/types.wgsl; age >= lifetime means dead),
``alive_list`` (alive slots, dense), ``counters`` (Counters; ``alive`` is set in PREPARE) and
``draw_args`` (its instance count is the alive count after PREPARE); in a batch they are views
into the batch's arenas, and a lone emitter's ``params`` and ``counters`` are views into pages
shared by all lone emitters (records.py). The scans' buffers are named after what they scan
(``<b>/block_alive:scan_sums0`` ...).

Allocation modes (the ``allocation`` field):
  "ordered" (default): the k-th free slot in slot order is born when k < budget. The born set is a
      function of the state alone, so runs replay byte for byte.
  "atomic": each free slot takes a unit of the budget with atomicSub and undoes an underflow.
  "ticket": each free slot takes a monotonic atomicAdd ticket, born while ticket < budget.
  The atomic modes give exact counts but which free slots win depends on scheduling, so states
  are reproducible only when the budget covers every free slot.
"""

from __future__ import annotations

import numpy as np
import wgpu

from emberfx.blocks.textures import TextureError, sprite_texture
from emberfx.core.errors import SceneError
from emberfx.core.events import REARRANGE
from emberfx.core.frame_graph import Pass
from emberfx.core.system import EntityRef, Priority, Readback, StepInfo, System
from emberfx.model.registry import set_system
from emberfx.systems.emitter import (
    batches,
    features,
    gas_fields,
    mesh_particles,
    opacity,
    readout,
    step_upload,
)
from emberfx.systems.emitter import color as particle_color
from emberfx.systems.emitter import layout as emitter_layout
from emberfx.systems.emitter import passes as emitter_passes
from emberfx.systems.emitter import prewarm as emitter_prewarm
from emberfx.systems.emitter import step as emitter_step
from emberfx.systems.emitter.component import Emitter
from emberfx.systems.emitter.contacts import Contacts
from emberfx.systems.emitter.events import COUNTERS_CLEARED, EventWiring, check_links
from emberfx.systems.emitter.modifiers import (
    Program,
    layout_signature,
    only_program_changed,
    program_key,
)
from emberfx.systems.emitter.params import pack_params
from emberfx.systems.emitter.pool import Pool
from emberfx.systems.emitter.records import RecordPages
from emberfx.systems.emitter.step_upload import StepArrays
from emberfx.systems.emitter.structs import PARAMS, PARTICLE
from emberfx.systems.emitter.tuning import DEFAULT, EmitterTuning
from emberfx.systems.forces.fields import NO_VECTOR_FIELDS, VECTOR_FIELDS, VectorFields
from emberfx.systems.forces.forces import FORCE_KEYS, kind_bits


class EmitterSystem(System):
    key = "emitter"
    priority = Priority.DYNAMICS

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        # how every pool and batch of this system steps (tuning.py), fixed for its life
        self.tuning: EmitterTuning = shared.tuning_value(self.key, DEFAULT, "emitter_tuning")
        self.pools: dict[str, Pool] = {}
        self.casting: dict[str, Pool] = {}   # the pools that cast into the light's shadow map
        self.acting: tuple = ()   # _acting_signature() when the pools were last refreshed
        self.events = EventWiring(self)   # GPU events between pools (sub-emitters)
        self.batches: list[batches.Batch] = []   # like pools sharing arenas and passes
        self.pending: dict[tuple, list[Pool]] = {}   # spawned like pools waiting to batch
        self.runs: tuple[tuple, dict[int, Pass]] = ((), {})   # batches.draw_runs, cached
        self.records = RecordPages(self)   # every pool's params and counters (records.py)
        # the vector fields' samples, as the force_field system last announced them
        self.vector_fields: VectorFields = NO_VECTOR_FIELDS
        shared.events.set_handler(VECTOR_FIELDS, self._vector_fields_announced)

    def _vector_fields_announced(self, fields: VectorFields) -> None:
        """Kept for the next ``world_changed`` (the force_field system's changes are followed
        by one), which compares the version and refreshes the pools' update passes."""
        self.vector_fields = fields

    def scene_has_forces(self) -> bool:
        return bool(self.query(*FORCE_KEYS))

    def scene_force_kinds(self) -> int:
        """The kinds of the scene's forces as a FORCE_KINDS mask (0: no force entity)."""
        return kind_bits(c for _, c in self.query(*FORCE_KEYS))

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
        problem = features.problem(component, self.shared.resolve)
        if problem is not None:
            field, _, why = problem.partition(": ")
            raise SceneError(self.shared.scene_path, why, entity=name, field=f"emitter.{field}")
        contents = features.buffers(component, self.shared.resolve)
        texture = self._sprite_texture(name, component)   # before any resource: it may refuse
        program = self._program(entity, component)           # compiled: it may refuse too
        self.gpu.check_buffer_size(n * PARTICLE.itemsize,
                                   f"entity '{name}': emitter.capacity = {n:,} "
                                   f"({PARTICLE.itemsize} bytes per particle)")
        storage = wgpu.BufferUsage.STORAGE
        slots = features.slot_buffers(component, program, n)
        for key, (size, _) in slots.items():
            self.gpu.check_buffer_size(size, f"entity '{name}': emitter {key} for {n:,} slots "
                                             f"({size // max(n, 1)} bytes per particle)")
        sizes = {**slots, **{key: (len(data), storage) for key, data in contents.items()}}
        # published in the registry as <entity>/<key>: a trail binds <entity>/particles
        b = {key: self.buffer(entity, key, size, usage) for key, (size, usage) in sizes.items()}
        pool = Pool(entity, component, b, [], contacts=Contacts(self, entity))
        pool.program, pool.texture = program, texture
        pool.layout = layout_signature(component, self.shared.resolve)
        for key, data in contents.items():
            self.resources.write(b[key], data)
        self.events.attach(pool)
        self.place_alone(pool)
        self.pools[name] = pool
        if "mesh_look" in b or opacity.casts(component):   # (both rebuild when edited)
            self.casting[name] = pool
        self.resources.write(b["params"], pack_params(
            pool.param_record, component, entity=entity.index, frame=0, seed=0, dt=0.0, budget=0,
            force_count=0))
        for key, (feature, _) in features.records(component).items():   # (the looks)
            self.resources.write(b[key], feature.pack_record(component, key))
        if component.prewarm > 0.0:
            emitter_prewarm.prewarm(self, pool)
        for target in features.rebuilds(self, pool):   # (made before it, they depend on it)
            self.rebuild(target.entity, target.component)

    def place_alone(self, pool: Pool) -> None:
        """Give the pool buffers of its own, laid out as a simulation of one (layout.py; its
        records: views into a shared page, records.py), and its own passes but the
        simulation's (``simulation_passes``, which ``add`` prepends)."""
        entity = pool.entity
        layout = emitter_layout.plan(self, [pool.component])
        for key, (size, usage) in layout.sizes.items():
            if key not in emitter_layout.RECORDS:
                pool.buffers[key] = self.buffer(entity, key, size, usage)
        record = np.zeros((), PARAMS)
        record[()] = pool.param_record
        for field_name, value in layout.record_fields(0).items():
            record[field_name] = value
        pool.param_record, pool.batch = record, None
        self.records.place(pool)   # its params and counters: views into a shared page
        pool.arrays, pool.dirty = StepArrays.of(1, layout.records), True   # new buffers
        pool.record_keys = {}
        self.events.own_records(pool)   # (a view into its batch's records arena, if it was in one)
        pool.sim = batches.Simulation(entity.name, pool.buffers, layout.blocks)
        features.simulation(self, pool, pool.sim)
        pool.variant = self._variant(pool)
        pool.updates.clear()
        self.place_member(pool)
        pool.passes = (emitter_step.simulation_passes(self, pool, pool.sim, pool.updates)
                       + pool.passes)

    def place_member(self, pool: Pool) -> None:
        """The pool's own passes over its buffers (views into its batch's arenas, or its own):
        the alpha sort, the draw, and its readback."""
        component, b = pool.component, pool.buffers
        passes: list[Pass] = []
        if component.blend == "alpha" and pool.batch is None:   # (a batch sorts its own)
            passes += emitter_passes.alpha_sort(self, pool.entity.name,
                                                {**b, "sort_values": b["alive_list"]},
                                                component.capacity, 0, 1)
        drawn = features.draw(self, pool)   # a feature's draw (mesh particles), or sprites
        if drawn is not None:
            passes += drawn
        elif pool.batch is None:   # (a batch's emitters draw in runs: batches.draw_runs)
            passes.append(emitter_passes.lone_draw_pass(self, pool))
        if opacity.casts(component) and pool.batch is None:
            passes.append(opacity.opacity_pass(self, pool))
        pool.passes = passes
        pool.readback = step_upload.counters_readback(pool.entity.name,
                                                       pool.buffers["counters"], 1)

    def arrange(self, changed: str | None = None) -> bool:
        """Regroup like pools into batches (batches.py); True when buffers moved."""
        if changed is None:
            return batches.arrange(self)
        return batches.arrange_after(self, changed)

    def _program(self, entity: EntityRef, component: Emitter) -> Program:
        """The emitter's modifiers, attributes and expressions, compiled (SceneError if not)."""
        inherited = particle_color.inherited(self.query("emitter"), entity.name)
        return Program(component, self.shared.resolve, entity.name, self.shared.scene_path,
                       inherited).compiled(self.device)

    def rebuild(self, entity: EntityRef, component: Emitter) -> None:
        """A rebuild that only the modifiers need (a watched modifier file changed, or
        `init` / `update` was edited) recompiles in place: the particles stay, and a program
        that does not compile raises a SceneError while the last good one keeps running."""
        pool = self.pools.get(entity.name)
        if pool is None or not only_program_changed(pool.layout, component, self.shared.resolve):
            super().rebuild(entity, component)
            return
        program = self._program(entity, component)
        if features.rebuilds_for(pool, program):   # a buffer of its comes or goes (colour)
            super().rebuild(entity, component)
            return
        self.reprogram(pool, program)
        pool.layout = layout_signature(component, self.shared.resolve)

    def reprogram(self, pool: Pool, program: Program) -> None:
        """Give a lone pool the update, spawn and sprite draw passes of a new program; its
        buffers and particles stay."""
        pool.program = program
        pool.updates.clear()
        self._refresh(pool)
        if pool.component.allocation == "ordered":
            self.replace_spawn(pool)
        draw = f"{pool.entity.name}:emitter:draw"
        pool.passes = [emitter_passes.lone_draw_pass(self, pool) if p.name == draw else p
                       for p in pool.passes]

    def replace_spawn(self, pool: Pool) -> None:
        """A new spawn pass for the pool (its event links changed: events.py)."""
        assert pool.sim is not None   # (alone)
        pool.passes = emitter_step.with_new_spawn(self, pool, pool.sim, pool.passes,
                                                    pool.updates)

    def rewire_batch(self, batch: batches.Batch) -> None:
        """The event links into members of ``batch`` changed (events.py)."""
        batches.rewire(self, batch)

    def _variant(self, pool: Pool) -> tuple[int, int, bool]:
        assert pool.contacts is not None
        fields = any(getattr(f, "kind", None) == "vector_field" for f in self.forces_on(pool))
        return (self.scene_force_kinds(), pool.contacts.solid_kinds(pool.component), fields)

    def _refresh(self, pool: Pool) -> None:
        """Bring the pool's update pass up to date: the variant for what acts on it now, bound
        to the volumes buffer that holds what it samples (remade when it grew). A batched pool
        acts with nothing of its own (batches.batch_key): its batch's pass is refreshed."""
        assert pool.contacts is not None
        if pool.batch is not None:
            return
        if pool.contacts.refresh(pool.component, self.forces_on(pool)):
            pool.updates.clear()   # they bound the old volumes buffer
        pool.uploading = None      # whether its contacts write each step may have changed
        variant = self._variant(pool)
        current = next((i for i, p in enumerate(pool.passes)
                        if p.name.endswith(":emitter:update")), None)
        update = pool.updates.get(variant)
        assert pool.sim is not None
        if update is None:
            pool.variant = variant
            update = pool.updates[variant] = emitter_step.update_pass_for(self, pool, pool.sim)
        pool.variant = variant
        if current is not None:   # (and the births pass, as the variant needs)
            pool.passes = emitter_step.with_update(self, pool, pool.sim, pool.passes, update)

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
        stale = [p for p in self.pools.values() if features.stale(self, p)]
        for pool in stale:   # (a Life shape's layer was made anew): built again in full
            super().rebuild(pool.entity, pool.component)
        if stale:   # its readback region moved: lay the readback out again before the step
            self.shared.events.dispatch_event(REARRANGE)

    def _acting_signature(self) -> tuple:
        """What the pools' update passes depend on beyond their own components: the collider
        components, whether any force acts, and the vector fields' samples."""
        return (tuple((id(c), c.shape, c.sdf, c.sdf_kind) for _, c in self.query("collider")),
                self.scene_force_kinds(), self.vector_fields.version)

    def targets_changed(self) -> None:
        """New render targets: update passes bind the new "scene/depth", mesh draws the
        shadow map."""
        for pool in self.pools.values():
            pool.updates.clear()
            self._refresh(pool)
            if "mesh_look" in pool.buffers:
                mesh_particles.redraw(self, pool)
            elif opacity.receives(pool.component) and pool.batch is None:
                fresh = emitter_passes.lone_draw_pass(self, pool)   # binds the shadow map
                pool.passes = [fresh if p.name == fresh.name else p for p in pool.passes]

    def shadow_casters(self) -> list[tuple[tuple[float, float, float], float]]:
        """Where the particles of each emitter that casts (mesh particles, cast_shadows) can be
        (opacity.caster_sphere)."""
        return [opacity.caster_sphere(pool.component) for pool in self.casting.values()]

    def burst(self, entity: EntityRef, count: int) -> None:
        """`count` extra births on the next step (scripts: ctx.burst)."""
        self.pools[entity.name].births.extra += count

    def remove(self, entity: EntityRef) -> None:
        pool = self.pools.pop(entity.name)   # the registry releases its buffers and views
        self.casting.pop(entity.name, None)
        self.records.free(pool)
        if pool.batch is not None:   # its slots idle until the batch is packed again
            batches.retire_member(self, pool)
        self.events.forget(entity.name)

    # per frame ---------------------------------------------------------------------------------
    def passes(self) -> list[Pass]:
        for pool in self.pools.values():   # a live edit of `collision` changes the variant
            self._refresh(pool)
        for batch in self.batches:   # a force came or went: the other update variant
            lead = batch.members[0]
            lead.variant = self._variant(lead)
            if lead.variant not in batch.updates:
                batch.updates[lead.variant] = batches.member_writes(
                    batch, emitter_step.update_pass_for(self, lead, batch.sim))
            batch.passes = emitter_step.with_update(self, lead, batch.sim, batch.passes,
                                                      batch.updates[lead.variant])
        self.events.refresh()
        # batches that no events reach first; then the pools alone, sources before their
        # targets, each source's event passes after its update, and each run of batched draws
        # where its first emitter's draw would be; then the batches events spawn into (no
        # batched emitter sends events: they follow every source)
        order = self.events.ordered()
        runs = batches.draw_runs(self, order)
        out = [p for batch in self.batches if not batch.records_bases for p in batch.passes]
        for pool in order:
            if pool.batch is None:
                out += self.events.with_events(pool)
            else:
                out += pool.passes   # its own passes beside the draw (none so far)
                run = runs.get(id(pool))
                if run is not None:
                    out.append(run)
        return out + [p for batch in self.batches if batch.records_bases for p in batch.passes]

    def readbacks(self) -> list[Readback]:
        """Each lone pool's counters, and each batch's in one region (one copy for all)."""
        return ([pool.readback for pool in self.pools.values()
                 if pool.batch is None and pool.readback is not None]
                + [step_upload.counters_readback(batch.name, batch.sim.buffers["counters"],
                                                  len(batch.members))
                   for batch in self.batches])

    def readbacks_of(self, entity: EntityRef) -> list[Readback]:
        pool = self.pools.get(entity.name)   # (a spawn that joins a batch lays all out again)
        if pool is None or pool.batch is not None or pool.readback is None:
            return []
        return [pool.readback]

    def before_step(self, step: StepInfo) -> None:
        """Pack every simulation's step (the lone pools' and each batch's), then the records
        pages set the step's own fields (all lone pools' at once: a column per page), then
        the features upload and every page is written once per kind."""
        in_scene = self.query(*FORCE_KEYS)   # once for all pools
        start = step.frame * step.dt
        cache: dict = {}   # the forces arranged, by affected_by, for every simulation
        lone: list[tuple[Pool, step_upload.Packed]] = []
        for pool in self.pools.values():
            assert pool.program is not None
            if pool.dirty and program_key(pool.component) != pool.program.key:
                # a live edit made a field an expression or a colour modifier (or not): a
                # SceneError here makes the step undo the edit
                program = self._program(pool.entity, pool.component)
                if pool.batch is not None:   # it leaves its batch before this step encodes
                    pool.program = program
                else:
                    self.reprogram(pool, program)
                # either way this step's frame graph is made again, with the new passes
                self.shared.events.dispatch_event(REARRANGE)
            if pool.batch is None:
                lone.append((pool, step_upload.pack(self, [pool], pool.arrays, step, start,
                                                    in_scene, cache)))
        batched = [(batch, step_upload.pack(self, batch.members, batch.arrays, step, start,
                                            in_scene, cache, batch.records_bases, batch.dead))
                   for batch in self.batches]
        self.records.set_step(step, start, [row for _, packed in lone for row in packed.rows])
        for batch, packed in batched:
            self.records.set_step(step, start, packed.rows, batch.page)
        for pool, packed in lone:
            step_upload.finish(self, pool.buffers, pool.arrays, packed)
        for batch, packed in batched:
            step_upload.finish(self, batch.sim.buffers, batch.arrays, packed)
        self.records.upload()   # every emitter's params and counters, a write per page

    def edited(self, entity: EntityRef, component) -> None:
        pool = self.pools.get(entity.name)
        if pool is not None:
            pool.dirty = True

    def step_uniforms(self, pool: Pool, step: StepInfo, start: float,
                      in_scene: list | None = None) -> tuple[bytes, bytes, bytes]:
        """One step's bytes of a lone pool for the params record, the forces array and the
        counters' cleared part (the budget word, then zeros up to the never-cleared event
        totals), for the step covering [start, start + dt) seconds (this advances the
        emitter's birth bookkeeping). ``in_scene``: the scene's force entities, when known."""
        budget, _, fields = step_upload.pack_member(self, pool, 0, pool.arrays, step, start,
                                                    in_scene, {})
        self.records.set_step(step, start, [(pool, 0, budget, fields)])
        cleared = np.zeros(COUNTERS_CLEARED // 4, np.uint32)
        cleared[0] = budget
        forces = pool.arrays.forces[:max(1, int(pool.param_record["force_count"]))]
        return pool.param_record.tobytes(), forces.tobytes(), cleared.tobytes()

    def forces_on(self, pool: Pool, in_scene: list | None = None) -> list:
        """The force components acting on this emitter, in scene order (a vector field whose
        source gas is gone acts on nothing)."""
        wanted = pool.component.affected_by
        if in_scene is None:
            in_scene = self.query(*FORCE_KEYS)
        return [comp for ref, comp in in_scene if (wanted is None or ref.name in wanted)
                and gas_fields.source_present(self, comp)]

    # inspection (blocking reads: readout.py) --------------------------------------------------
    def state(self, entity: EntityRef) -> dict[str, np.ndarray]:
        return readout.state(self.device, self.pools[entity.name])

    def counters(self, entity: EntityRef) -> dict:
        """Blocking read of the counters (per-kind event counts as lists) and draw args (tests
        and debugging)."""
        return readout.counters(self.device, self.pools[entity.name])

    def alive_list(self, entity: EntityRef) -> np.ndarray:
        """Blocking read of the compacted alive list (the draw's instances), alive-count long."""
        return readout.alive_list(self.device, self.pools[entity.name])

    def stats(self, entity: EntityRef, readback: dict[str, bytes]) -> dict:
        return readout.stats(self.pools[entity.name], readback, self.events)

    def script_events(self, readback: dict[str, bytes]) -> list[tuple[str, dict]]:
        return self.events.script_events(readback)


set_system("emitter", EmitterSystem)
