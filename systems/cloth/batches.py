"""Batches of cloth patches of one shape: one dispatch per substep and one normals dispatch for all.

Patches that compile to the same step (equal resolution and substep count, and the same answer
to "does any wind act on it" and "does any collider", the step's HAS_WIND and HAS_COLLIDERS)
share arenas:

  <batch>/pos0, pos1, vel0, vel1, rest, normals   each patch's vertices at a 256-byte aligned
                                                  place (first_vertex = entry x stride)
  <batch>/params                                  one 256-byte ClothRecord per patch
  <batch>/forces, colliders                       MAX_FORCES records per patch

and run one ``substeps`` pass (a dispatch over (x, y, patch), repeated substeps times, the two
pairs ping-ponging) and one ``normals`` pass for all of them (cloth/step.wgsl, normals.wgsl).
Each patch's buffers stay published under its own names (``<e>/pos0`` ...) as views into the
arenas, so its draw (one per patch, with its own look), ``state()`` and tests bind them as
before. A lone patch runs the same shaders as a batch of one over its own buffers, and
``Engine(batching=False)`` runs every patch so: a batched run is byte-identical to the same
patches run alone (tests/test_cloth_batches.py).

``arrange`` regroups the patches when the world changes (the Engine calls it when the world is
built, an entity is spawned, deleted or rebuilt; the system before a step whose patch changed
its key, e.g. a live edit of ``substeps`` or ``affected_by``): a patch that joins or leaves a
batch has its six vertex arrays copied on the GPU into its new place (both ping-pong pairs,
crossed when its parity differs from the batch's) and its records written again.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import wgpu

from emberfx.core.frame_graph import Pass
from emberfx.core.layout import struct_dtype
from emberfx.core.resources import VIEW_ALIGNMENT, BufferView
from emberfx.systems.colliders.cloth import COLLIDER
from emberfx.systems.forces.forces import FORCE, MAX_FORCES

if TYPE_CHECKING:
    from emberfx.systems.cloth.system import ClothSystem, _Patch

PARAMS = struct_dtype("cloth/types.wgsl", "ClothParams")
RECORD = struct_dtype("cloth/types.wgsl", "ClothRecord")   # PARAMS padded to 256 bytes
VERTEX = 16   # bytes of one vertex in each of the vertex arrays (a vec4f)
VERTEX_ARRAYS = ("pos0", "pos1", "vel0", "vel1", "rest", "normals")
SIM_BUFFERS = (*VERTEX_ARRAYS, "params", "forces", "colliders")
FORCES_BYTES = MAX_FORCES * FORCE.itemsize
COLLIDERS_BYTES = MAX_FORCES * COLLIDER.itemsize
SPAWN_GROUP = 8   # like patches spawned alone that then form a batch of their own
_serials = itertools.count()

# SimKey: (nx, ny, substeps, has_wind, has_colliders): what the shared passes compile to


@dataclass(eq=False)
class ClothSim:
    """What the simulation passes of one lone patch or of one batch bind and run."""
    name: str                           # the passes' owner: the entity, or the batch
    key: tuple                          # SimKey
    members: list[_Patch]               # by entry (z of the dispatch)
    buffers: dict[str, BufferView]      # SIM_BUFFERS: the patch's own, or the batch's arenas
    stride: int                         # vertices from one entry's first vertex to the next's
    batched: bool = False
    records: np.ndarray = field(init=False)     # one ClothRecord per entry
    forces: np.ndarray = field(init=False)      # MAX_FORCES Force records per entry
    colliders: np.ndarray = field(init=False)   # MAX_FORCES Collider records per entry
    passes: list[Pass] = field(default_factory=list)
    parity: int = 0        # the state is in pos<parity>/vel<parity> between steps
    step_parity: int = 0   # where this step's first substep reads
    dead: set[int] = field(default_factory=set)               # entries deleted (idle)
    written: dict[str, bytes] = field(default_factory=dict)   # last upload of each array

    def __post_init__(self):
        n = len(self.members)
        self.records = np.zeros(n, RECORD)
        self.forces = np.zeros(n * MAX_FORCES, FORCE)
        self.colliders = np.zeros(n * MAX_FORCES, COLLIDER)

    @property
    def substeps(self) -> int:
        return self.key[2]

    def store(self, k: int, patch: _Patch, record: bool = True) -> None:
        """Entry k's records from what the patch packed last (``patch.record`` when ``record``,
        its winds and colliders), placed at its offsets. Records past the counts are never
        read, so stale ones may stay."""
        if record:
            params = self.records["params"]
            params[k] = patch.record
            params["first_vertex"][k] = k * self.stride
            params["first_force"][k] = params["first_collider"][k] = k * MAX_FORCES
        base = k * MAX_FORCES
        if len(patch.winds):
            self.forces[base:base + len(patch.winds)] = patch.winds
        if len(patch.collider_records):
            self.colliders[base:base + len(patch.collider_records)] = patch.collider_records

    def upload(self, write) -> None:
        """Write the records (one write for all entries), the winds and the colliders, each
        only when it changed since the last upload (a patch's record changes after an edit)."""
        for key, array in (("params", self.records), ("forces", self.forces),
                           ("colliders", self.colliders)):
            data = array.tobytes()
            if self.written.get(key) != data:
                write(self.buffers[key], data)
                self.written[key] = data


def stride_of(key: tuple, batched: bool) -> int:
    nx, ny = key[0], key[1]
    per = VIEW_ALIGNMENT // VERTEX
    return math.ceil(nx * ny / per) * per if batched else nx * ny


def wanted_groups(system: ClothSystem, keys: dict[int, tuple]) -> list[tuple[tuple, list]]:
    """The batches the patches should form now: like patches in entity order, split where an
    arena would pass the device's largest storage binding or the dispatch its largest z; groups
    of one run alone."""
    if not system.shared.batching:
        return []
    limits = system.gpu.limits
    binding, most = (limits["max-storage-buffer-binding-size"],
                     limits["max-compute-workgroups-per-dimension"])
    groups: dict[tuple, list[list]] = {}
    for patch in system.patches.values():
        key = keys[id(patch)]
        chunks = groups.setdefault(key, [[]])
        entries = len(chunks[-1]) + 1
        if entries * stride_of(key, True) * VERTEX > binding or entries > most:
            chunks.append([])
        chunks[-1].append(patch)
    return [(key, chunk) for key, chunks in groups.items() for chunk in chunks if len(chunk) >= 2]


def arrange(system: ClothSystem) -> bool:
    """Regroup all the patches into the batches wanted now; lone patches whose key changed get
    their passes anew. True when any patch's buffers moved."""
    system.pending.clear()
    system.actors = {ref.name for ref, _ in system.query("force_field", "collider")}
    acting: dict = {}
    keys = {id(p): system.sim_key(p, acting) for p in system.patches.values()}
    wanted = wanted_groups(system, keys)

    def same(members: list, other: list) -> bool:
        return len(members) == len(other) and all(map(lambda a, b: a is b, members, other))

    kept = [b for b in system.batches if not b.dead
            and any(key == b.key and same(members, b.members) for key, members in wanted)]
    joining = [(key, members) for key, members in wanted
               if not any(b.key == key and same(members, b.members) for b in kept)]
    moved = _regroup(system, joining, [b for b in system.batches if b not in kept])
    for patch in system.patches.values():
        if not patch.sim.batched and patch.sim.key != keys[id(patch)]:
            system.refresh_alone(patch, keys[id(patch)])
    return moved


def arrange_after(system: ClothSystem, changed: str) -> bool:
    """After a spawn or delete of ``changed``, at a cost that does not grow with the patches
    unless a wind or collider came or went (that may change what every step compiles to): a
    batch with more idle entries (deleted) than live ones is packed again; a spawned patch
    waits alone until SPAWN_GROUP like ones have come, which then form a batch, merged with any
    batch of theirs at most twice their size (so each patch is copied O(log n) times)."""
    actors = {ref.name for ref, _ in system.query("force_field", "collider")}
    if changed in actors or changed in system.actors:
        system.actors = actors
        return arrange(system)
    patch = system.patches.get(changed)
    if patch is None:
        worn = [b for b in system.batches if 2 * len(b.dead) > len(b.members)]
        return _regroup(system, [(b.key, live(system, b)) for b in worn], worn)
    if not system.shared.batching or patch.sim.batched:
        return False
    key = patch.sim.key
    pending = [p for p in system.pending.get(key, []) if system.patches.get(p.entity.name) is p
               and not p.sim.batched and p.sim.key == key] + [patch]
    if len(pending) < SPAWN_GROUP:
        system.pending[key] = pending
        return False
    system.pending[key] = []
    merged, members = [], pending
    room = system.gpu.limits["max-storage-buffer-binding-size"] // (stride_of(key, True) * VERTEX)
    for batch in sorted((b for b in system.batches if b.key == key), key=lambda b: len(b.members)):
        alive = live(system, batch)
        if len(batch.members) <= 2 * len(members) and len(alive) + len(members) <= room:
            merged.append(batch)
            members = alive + members
    return _regroup(system, [(key, members)], merged)


def live(system: ClothSystem, sim: ClothSim) -> list:
    return [p for p in sim.members if system.patches.get(p.entity.name) is p]


def retire_member(system: ClothSystem, patch: _Patch) -> None:
    """A deleted member idles: its record's nx = 0 returns every invocation of its entry."""
    sim = patch.sim
    sim.dead.add(patch.member)
    sim.records[patch.member] = np.zeros((), RECORD)
    sim.upload(system.resources.write)


def _regroup(system: ClothSystem, joining: list[tuple[tuple, list]], retired: list) -> bool:
    """Make the batches ``joining`` (groups of fewer than two run alone) and retire those
    ``retired``: each patch that moves gets its vertex arrays copied on the GPU."""
    joining = [(key, members) for key, members in joining if len(members) >= 2]
    joined = {id(p) for _, members in joining for p in members}
    leaving = [p for b in retired for p in live(system, b) if id(p) not in joined]
    if not joining and not leaving and not retired:
        return False
    encoder = system.device.create_command_encoder(label="emberfx:cloth:arrange")
    spent: list = []   # own buffers of patches that moved, destroyed once the copies are done
    made = []
    for key, members in joining:
        batch = _new_batch(system, key, members)
        # the lead's parities: like members' differ in both or in neither (between steps
        # step_parity is not read; after before_step all advanced by the same substeps)
        batch.parity, batch.step_parity = members[0].sim.parity, members[0].sim.step_parity
        for k, patch in enumerate(members):
            flip = patch.sim.parity != batch.parity
            old = _take_place(system, patch, spent)
            place(system, batch, k, patch)
            _copy_state(encoder, old, patch.buffers, flip)
        made.append(batch)
    for patch in leaving:
        parities = patch.sim.parity, patch.sim.step_parity
        old = _take_place(system, patch, spent)
        system.place_alone(patch, system.sim_key(patch))
        patch.sim.parity, patch.sim.step_parity = parities
        _copy_state(encoder, old, patch.buffers, False)
        made.append(patch.sim)
    system.device.queue.submit([encoder.finish()])
    for buffer in spent:
        buffer.destroy()
    for batch in retired:
        system.resources.release(batch.name, system.key)
    system.batches = [b for b in system.batches if b not in retired] + [
        s for s in made if s.batched]
    for sim in made:
        finish(system, sim)
    return True


def _new_batch(system: ClothSystem, key: tuple, members: list) -> ClothSim:
    """A new batch's arenas (zeroed)."""
    name = f"~cloth{next(_serials)}"
    n, stride = len(members), stride_of(key, True)
    storage = wgpu.BufferUsage.STORAGE
    sizes = {**{k: (n * stride * VERTEX, storage) for k in VERTEX_ARRAYS},
             "params": (n * RECORD.itemsize, storage | wgpu.BufferUsage.UNIFORM),
             "forces": (n * FORCES_BYTES, storage), "colliders": (n * COLLIDERS_BYTES, storage)}
    what = (f"the {n} batched cloth patches {members[0].entity.name!r}.."
            f"{members[-1].entity.name!r} ({key[0]}x{key[1]} vertices each)")
    arenas = {k: system.resources.buffer(name, k, size,
                                         usage | wgpu.BufferUsage.COPY_SRC
                                         | wgpu.BufferUsage.COPY_DST,
                                         family=system.key, what=f"{what}: {k}")
              for k, (size, usage) in sizes.items()}
    return ClothSim(name, key, list(members), arenas, stride, batched=True)


def _take_place(system: ClothSystem, patch: _Patch, spent: list) -> dict[str, BufferView]:
    """Forget the names of the patch's simulation buffers (own buffers go to ``spent``); return
    the old views of its vertex arrays."""
    old = {k: patch.buffers[k] for k in VERTEX_ARRAYS}
    for k in SIM_BUFFERS:
        buffer = system.resources.take(patch.buffers.pop(k).name)
        if buffer is not None:
            spent.append(buffer)
    return old


def place(system: ClothSystem, batch: ClothSim, k: int, patch: _Patch) -> None:
    """Entry k's views into the arenas, published under the patch's own names, and its
    records."""
    name, (nx, ny) = patch.entity.name, patch.component.resolution
    regions = {**{key: (k * batch.stride * VERTEX, nx * ny * VERTEX) for key in VERTEX_ARRAYS},
               "params": (k * RECORD.itemsize, RECORD.itemsize),
               "forces": (k * FORCES_BYTES, FORCES_BYTES),
               "colliders": (k * COLLIDERS_BYTES, COLLIDERS_BYTES)}
    for key, (offset, size) in regions.items():
        patch.buffers[key] = system.resources.view(f"{batch.name}/{key}", key, offset, size,
                                                   owner=name)
    patch.sim, patch.member = batch, k
    batch.store(k, patch)


def _copy_state(encoder, old: dict[str, BufferView], new: dict[str, BufferView],
                flip: bool) -> None:
    """Both ping-pong pairs, crossed when ``flip`` (the new place's parity is the other one),
    the rest positions and the normals."""
    for key, source in old.items():
        target_key = key
        if flip and key[:3] in ("pos", "vel"):
            target_key = f"{key[:3]}{1 - int(key[3])}"
        target = new[target_key]
        encoder.copy_buffer_to_buffer(source.buffer, source.offset, target.buffer, target.offset,
                                      min(source.size, target.size))


def finish(system: ClothSystem, sim: ClothSim) -> None:
    """The sim's shared passes, each member's draws, and the records a render before the next
    step reads."""
    sim.passes = [member_writes(sim, p) for p in system.sim_passes(sim)]
    for patch in sim.members:
        system.place_member(patch)
    sim.written.clear()
    sim.upload(system.resources.write)


def member_writes(sim: ClothSim, p: Pass) -> Pass:
    """``p`` declaring, beside each arena it writes, every member's view of it: the frame graph
    then orders each reader of ``<e>/pos0`` after it."""
    if not sim.batched:
        return p
    arenas = {view.name: key for key, view in sim.buffers.items()}
    extra = [patch.buffers[arenas[name]].name for name in p.writes if name in arenas
             for patch in sim.members if arenas[name] in patch.buffers]
    return replace(p, writes=tuple(dict.fromkeys((*p.writes, *extra))))
