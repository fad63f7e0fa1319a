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
block; a slot's rank is its block's scanned offset (emberfx.scan, shared) plus the set bits before
it in its block (countOneBits). The alive list is dense and in slot order in every mode.

Allocation modes (the ``allocation`` field):
  "ordered" (default): the k-th free slot in slot order is born when k < budget. The born set is a
      function of the state alone, so runs replay byte for byte.
  "atomic": each free slot takes a unit of the budget with atomicSub and undoes an underflow.
  "ticket": each free slot takes a monotonic atomicAdd ticket, born while ticket < budget.
  The atomic modes give exact counts but which free slots win depends on scheduling, so states
  are reproducible only when the budget covers every free slot.
"""

from __future__ import annotations

import contextlib
import math
import sys
from dataclasses import dataclass, field

import numpy as np
import wgpu

from emberfx import wgsl
from emberfx.errors import SceneError
from emberfx.frame_graph import (
    SIMULATION_PHASES,
    ClearBuffer,
    Dispatch,
    Draw,
    FrameGraph,
    Pass,
    Phase,
)
from emberfx.layout import struct_dtype
from emberfx.readback import read_array, read_buffer
from emberfx.registry import set_system
from emberfx.scan import PrefixScan
from emberfx.sort import KeySort
from emberfx.sprites import sprite_pipeline
from emberfx.system import EntityRef, Readback, StepInfo, System
from emberfx.systems.emitter_component import Emitter
from emberfx.systems.emitter_params import (
    BLOCK,
    BLOCK_WORDS,
    LOOKS,
    PARAMS,
    Births,
    bake_looks,
    pack_params,
)
from emberfx.systems.forces import FORCE, FORCE_KEYS, MAX_FORCES, arrange, pack_forces

ALLOCATION_MODES = wgsl.enum_constants("emitter/update.wgsl", "ALLOCATION")
COUNT_GROUP = wgsl.workgroup_size("emitter/count.wgsl")[0]   # blocks per count workgroup
DEPTH_GROUP = wgsl.workgroup_size("emitter/depth.wgsl")[0]   # alive entries per depth workgroup
PREWARM_FRAMES = 1 << 31         # birth-seed frames used while prewarming
# Prewarm submissions: each holds at most PREWARM_BATCH_WORK particle-steps (and at most
# PREWARM_BATCH_STEPS steps), so one stays short on any device and the progress bar moves; a
# prewarm of PREWARM_NOTICE_WORK or more says on stderr that it runs (a bar on a terminal).
PREWARM_BATCH_WORK = 1 << 25
PREWARM_BATCH_STEPS = 256
PREWARM_NOTICE_WORK = 1 << 25
PARTICLE = struct_dtype("emitter/types.wgsl", "Particle")
COUNTERS = struct_dtype("emitter/types.wgsl", "Counters")


@dataclass
class _Pool:
    """The GPU side of one emitter entity."""
    entity: EntityRef
    component: Emitter
    buffers: dict[str, wgpu.GPUBuffer]
    passes: list[Pass]
    readback: Readback   # the counters region the engine copies back each step
    scans: dict[str, PrefixScan | KeySort] = field(default_factory=dict)
    births: Births = field(default_factory=Births)
    looks_key: tuple | None = None   # the curves last baked into the looks buffer
    param_record: np.ndarray = field(default_factory=lambda: np.zeros((), PARAMS))
    updates: dict[bool, Pass] = field(default_factory=dict)   # update pass by HAS_FORCES


class EmitterSystem(System):
    key = "emitter"

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.pools: dict[str, _Pool] = {}
        self.forces_compiled = False   # the HAS_FORCES every pool's update pass is built with

    def _scene_has_forces(self) -> bool:
        return bool(self.shared.world.components(*FORCE_KEYS))

    def births_from_storage(self) -> bool:
        """Whether births read the params buffer through its storage binding: on software
        adapters, whose uniform inlining would recompile the birth passes at every dispatch
        (EmitterParams in emitter/types.wgsl); a GPU keeps its uniform loads."""
        return self.gpu.is_software

    def _draw_pipeline(self, blend: str):
        return sprite_pipeline(self.device, "emitter/draw.wgsl", blend, self.shared.scene_format,
                               self.shared.depth_format)

    # lifecycle ---------------------------------------------------------------------------------
    def add(self, entity: EntityRef, component: Emitter) -> None:
        n = component.capacity
        name = entity.name
        problem = component.prewarm_problem(self.shared.fixed_dt)
        if problem is not None:
            raise SceneError(self.shared.scene_path, problem, entity=name, field="emitter.prewarm")
        blocks = math.ceil(n / BLOCK)
        self.gpu.check_buffer_size(n * PARTICLE.itemsize,
                                   f"entity '{name}': emitter.capacity = {n:,} "
                                   f"({PARTICLE.itemsize} bytes per particle)")
        ordered = component.allocation == "ordered"
        births_from_storage = self.births_from_storage()
        params_usage = wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST
        if births_from_storage:   # the birth passes' binding 6 (birth_params) reads it as storage
            params_usage |= wgpu.BufferUsage.STORAGE
        buffers = {
            "params": self.gpu.buffer(f"{name}/params", PARAMS.itemsize, params_usage),
            "particles": self.storage_buffer(f"{name}/particles", n * PARTICLE.itemsize),
            "counters": self.storage_buffer(f"{name}/counters", COUNTERS.itemsize),
            "block_alive": self.storage_buffer(f"{name}/block_alive", blocks * 4),
            "alive_list": self.storage_buffer(f"{name}/alive_list", n * 4),
            "draw_args": self.storage_buffer(f"{name}/draw_args", 16,
                                             extra_usage=wgpu.BufferUsage.INDIRECT),
            "looks": self.storage_buffer(f"{name}/looks", LOOKS.itemsize),
            "forces": self.storage_buffer(f"{name}/forces", MAX_FORCES * FORCE.itemsize),
        }
        if component.blend == "alpha":
            buffers["sort_keys"] = self.storage_buffer(f"{name}/sort_keys", n * 4)
        if ordered:
            buffers["free_mask"] = self.storage_buffer(f"{name}/free_mask",
                                                       blocks * BLOCK_WORDS * 4)
            buffers["block_free"] = self.storage_buffer(f"{name}/block_free", blocks * 4)
        else:
            buffers["alive_mask"] = self.storage_buffer(f"{name}/alive_mask",
                                                        blocks * BLOCK_WORDS * 4)
        if not births_from_storage:
            # binding 6 is never read here: a placeholder keeps the params buffer to one usage
            # (bound as both uniform and storage, it cost an H200 ~0.4 us a step)
            buffers["birth_placeholder"] = self.gpu.buffer(
                f"{name}/birth_placeholder", PARAMS.itemsize, wgpu.BufferUsage.STORAGE)
        b = buffers
        r = {k: f"{name}/{k}" for k in buffers}   # resource names for the frame graph
        grid = self.gpu.grid(blocks)
        prefix = f"{name}:emitter"
        gpu = self.gpu
        alive_scan = PrefixScan(gpu, f"{prefix}:alive", b["block_alive"], r["block_alive"], blocks)
        scans: dict[str, PrefixScan | KeySort] = {"alive": alive_scan}

        def dispatch(shader, groups_, buffers_, **constants):
            pipeline = gpu.compute_pipeline(f"emitter/{shader}.wgsl", constants)
            return Dispatch(pipeline,
                            (gpu.bind_group(f"{prefix}:{shader}", pipeline, 0, buffers_),),
                            groups_)

        has_forces = self._scene_has_forces()
        if has_forces != self.forces_compiled:   # the first force entity, or the last, went
            self._compile_forces(has_forces)
        update = self._update_pass(name, component, buffers, has_forces)
        passes = [
            Pass(f"{prefix}:clear", Phase.CLEAR,
                 ClearBuffer(b["counters"], 4, COUNTERS.itemsize - 4),
                 writes=(r["counters"],)),
            update,
        ]
        if ordered:
            # free ranks -> alive counts per block -> alive ranks; then one pass gives births and
            # writes the alive list (emitter/count.wgsl and spawn.wgsl explain the arithmetic)
            free_scan = scans["free"] = PrefixScan(gpu, f"{prefix}:free", b["block_free"],
                                                   r["block_free"], blocks)
            passes += free_scan.passes()
            passes.append(Pass(
                f"{prefix}:count", Phase.SIMULATE,
                dispatch("count", (math.ceil(blocks / COUNT_GROUP), 1, 1),
                         [b["params"], b["block_free"], free_scan.total[0], b["block_alive"],
                          b["counters"]]),
                reads=(r["params"], r["block_free"], free_scan.total_resource, r["counters"]),
                writes=(r["block_alive"], r["counters"])))
            passes += alive_scan.passes()
            passes.append(Pass(
                f"{prefix}:spawn", Phase.SIMULATE,
                dispatch("spawn", grid, [b["params"], b["particles"], b["free_mask"],
                                         b["block_free"], b["block_alive"], b["alive_list"],
                                         birth_binding(b)],
                         BIRTHS_FROM_STORAGE=births_from_storage),
                reads=(r["params"], r["particles"], r["free_mask"], r["block_free"],
                       r["block_alive"]),
                writes=(r["particles"], r["alive_list"])))
        else:
            passes += alive_scan.passes()
            passes.append(Pass(
                f"{prefix}:compact", Phase.SIMULATE,
                dispatch("compact", grid, [b["params"], b["alive_mask"], b["block_alive"],
                                           b["alive_list"]]),
                reads=(r["params"], r["alive_mask"], r["block_alive"]), writes=(r["alive_list"],)))
        if component.blend == "alpha":   # back to front, by this frame's camera
            passes.append(Pass(
                f"{prefix}:depth", Phase.RENDER,
                dispatch("depth", gpu.grid(math.ceil(n / DEPTH_GROUP)),
                         [self.shared.frame_uniform, b["particles"], b["alive_list"],
                          alive_scan.total[0], b["sort_keys"]]),
                reads=("frame", r["particles"], r["alive_list"], alive_scan.total_resource),
                writes=(r["sort_keys"],)))
            scans["sort"] = KeySort(gpu, prefix, b["sort_keys"], b["alive_list"], r["sort_keys"],
                                    r["alive_list"], n, count=alive_scan.total,
                                    count_resource=alive_scan.total_resource)
            passes += scans["sort"].passes(Phase.RENDER)
        prepare = gpu.compute_pipeline("emitter/prepare.wgsl")
        draw = self._draw_pipeline(component.blend)
        total_buffer, _ = alive_scan.total
        passes += [
            Pass(f"{prefix}:prepare", Phase.PREPARE,
                 Dispatch(prepare, (gpu.bind_group(f"{prefix}:prepare", prepare, 0,
                                                   [b["counters"], total_buffer]),
                                    gpu.bind_group(f"{prefix}:args", prepare, 1,
                                                   [b["draw_args"]]))),
                 reads=(r["counters"], alive_scan.total_resource),
                 writes=(r["counters"], r["draw_args"])),
            Pass(f"{prefix}:draw", Phase.RENDER,
                 Draw(draw, (gpu.bind_group(f"{prefix}:draw", draw, 0,
                             [self.shared.frame_uniform, b["params"], b["particles"],
                              b["alive_list"], b["looks"]]),),
                      target="scene", indirect=(b["draw_args"], 0)),
                 reads=("frame", r["params"], r["particles"], r["alive_list"], r["looks"],
                        r["draw_args"]),
                 writes=("scene/color",)),
        ]
        pool = _Pool(entity, component, buffers, passes, scans=scans, updates={has_forces: update},
                     readback=Readback(name, "emitter", r["counters"], b["counters"], 0,
                                       COUNTERS.itemsize))
        self.pools[name] = pool
        queue = self.device.queue
        queue.write_buffer(b["params"], 0, pack_params(
            pool.param_record, component, entity=entity.index, frame=0, seed=0, dt=0.0, budget=0,
            force_count=0))
        queue.write_buffer(b["looks"], 0, bake_looks(component))
        if component.prewarm > 0.0:
            self._prewarm(pool)

    def _prewarm(self, pool: _Pool) -> None:
        """Run the emitter alone for `prewarm` seconds before the scene's first step. Those steps
        lie before t = 0 (so bursts do not fire) and seed births with frames from 2**31 up, apart
        from the scene's own frames.

        Steps go to the GPU in batches, one submission each. A queue.write_buffer lands before
        the submission, so every step of a batch would see the last one's uniforms; instead each
        step's params, forces and budget word are staged side by side in one buffer, and the
        batch copies a step's share into place before that step's passes (byte for byte what
        write_buffer gives a step-by-step run). A two-deep fence keeps one batch queued while
        the previous finishes, so the progress shown follows the GPU, not the encoder."""
        c, name = pool.component, pool.entity.name
        dt, seed = self.shared.fixed_dt, self.shared.seed
        steps = c.prewarm_steps(dt)
        graph = FrameGraph([p for p in pool.passes if p.phase in SIMULATION_PHASES
                            and p.phase != Phase.READBACK], self._uploaded(name, pool))
        in_scene = self.shared.world.components(*FORCE_KEYS)
        batch = prewarm_batch_steps(c.capacity)
        targets = (pool.buffers["params"], pool.buffers["forces"], pool.buffers["counters"])
        usage = wgpu.BufferUsage
        staging = None
        fences = [self.device.create_buffer(label=f"{name}:emitter:prewarm:fence[{i}]", size=4,
                                            usage=usage.MAP_READ | usage.COPY_DST)
                  for i in range(2)]
        in_flight: list[tuple[object, object, int]] = []   # (fence, its map, steps in the batch)
        with _prewarm_progress(name, c, steps) as progress:
            try:
                for first in range(0, steps, batch):
                    uniforms = [self._step_uniforms(
                        pool, StepInfo(frame=PREWARM_FRAMES + k, dt=dt, seed=seed),
                        (k - steps) * dt, in_scene)
                        for k in range(first, min(first + batch, steps))]
                    sizes = [len(part) for part in uniforms[0]]
                    stride = sum(sizes)
                    if staging is None:
                        staging = self.device.create_buffer(
                            label=f"{name}:emitter:prewarm:uniforms", size=batch * stride,
                            usage=usage.COPY_SRC | usage.COPY_DST)
                    self.device.queue.write_buffer(
                        staging, 0, b"".join(part for step in uniforms for part in step))
                    encoder = self.device.create_command_encoder(label=f"{name}:emitter:prewarm")
                    for i in range(len(uniforms)):
                        offset = i * stride
                        for target, size in zip(targets, sizes):
                            encoder.copy_buffer_to_buffer(staging, offset, target, 0, size)
                            offset += size
                        graph.encode(encoder, {})
                    # a fence is reused two batches later, after its map was waited for and
                    # undone: a submit must never touch a buffer mapped or pending a map
                    fence = fences[(first // batch) % 2]
                    encoder.copy_buffer_to_buffer(targets[2], 0, fence, 0, 4)
                    self.device.queue.submit([encoder.finish()])
                    in_flight.append((fence, fence.map_async("READ_NOSYNC"), len(uniforms)))
                    if len(in_flight) == 2:
                        progress(_finish_fence(*in_flight.pop(0)))
                while in_flight:
                    progress(_finish_fence(*in_flight.pop(0)))
            finally:
                if staging is not None:
                    staging.destroy()
                if not in_flight:   # a fence still pending (an interrupt) is left to the GC
                    for fence in fences:
                        fence.destroy()
        pool.births.last_position = None

    def _update_pass(self, name: str, component: Emitter, b: dict, has_forces: bool) -> Pass:
        """The update marks free slots (ordered: births come in spawn) or, having spawned itself
        (atomic, ticket), the final alive slots. Without forces in the scene the force loop is
        compiled out (HAS_FORCES), much faster on CPU backends."""
        ordered = component.allocation == "ordered"
        marks = ("free_mask", "block_free") if ordered else ("alive_mask", "block_alive")
        pipeline = self.gpu.compute_pipeline(
            "emitter/update.wgsl", {"ALLOCATION": ALLOCATION_MODES[component.allocation],
                                    "HAS_FORCES": has_forces,
                                    "BIRTHS_FROM_STORAGE": self.births_from_storage()})
        group = self.gpu.bind_group(f"{name}:emitter:update", pipeline, 0,
                                    [b["params"], b["particles"], b["counters"], b[marks[0]],
                                     b[marks[1]], b["forces"], birth_binding(b)])
        r = lambda k: f"{name}/{k}"  # noqa: E731
        return Pass(f"{name}:emitter:update", Phase.SIMULATE,
                    Dispatch(pipeline, (group,),
                             self.gpu.grid(math.ceil(component.capacity / BLOCK))),
                    reads=(r("params"), r("particles"), r("counters"), r("forces")),
                    writes=(r("particles"), r("counters"), r(marks[0]), r(marks[1])))

    def world_changed(self) -> None:
        """Entities were spawned or deleted: only when the scene gains its first force entity
        or loses its last do the update passes change (HAS_FORCES), so a spawn costs the same
        in a world of any size."""
        has_forces = self._scene_has_forces()
        if has_forces != self.forces_compiled:
            self._compile_forces(has_forces)

    def _compile_forces(self, has_forces: bool) -> None:
        """Give every pool the update pass compiled for ``has_forces`` (each pool keeps both
        once built: bind groups belong to one pipeline's layout)."""
        for name, pool in self.pools.items():
            current = pool.updates[self.forces_compiled]
            update = pool.updates.get(has_forces)
            if update is None:
                update = pool.updates[has_forces] = self._update_pass(
                    name, pool.component, pool.buffers, has_forces)
            pool.passes[next(i for i, p in enumerate(pool.passes) if p is current)] = update
        self.forces_compiled = has_forces

    def burst(self, entity: EntityRef, count: int) -> None:
        """`count` extra births on the next step (scripts: ctx.burst)."""
        self.pools[entity.name].births.extra += count

    def remove(self, entity: EntityRef) -> None:
        pool = self.pools.pop(entity.name)
        for buffer in pool.buffers.values():
            buffer.destroy()
        for scan in pool.scans.values():
            scan.destroy()

    # per frame ---------------------------------------------------------------------------------
    def passes(self) -> list[Pass]:
        return [p for pool in self.pools.values() for p in pool.passes]

    def uploaded(self) -> set[str]:
        return set().union(*(self._uploaded(n, pool) for n, pool in self.pools.items()))

    @staticmethod
    def _uploaded(name: str, pool: _Pool) -> set[str]:
        # params are written every step; particles start zeroed (= all dead); the budget word of
        # counters is written every step (the rest is cleared by the clear pass)
        names = {f"{name}/{k}" for k in ("params", "particles", "counters", "forces", "looks")}
        for scan in pool.scans.values():
            names |= scan.uploaded()
        return names

    def readbacks(self) -> list[Readback]:
        return [pool.readback for pool in self.pools.values()]

    def readbacks_of(self, entity: EntityRef) -> list[Readback]:
        pool = self.pools.get(entity.name)
        return [pool.readback] if pool is not None else []

    def before_step(self, step: StepInfo) -> None:
        in_scene = self.shared.world.components(*FORCE_KEYS)   # once for all pools
        for pool in self.pools.values():
            self._upload_step(pool, step, in_scene=in_scene)

    def _upload_step(self, pool: _Pool, step: StepInfo, start: float | None = None,
                     in_scene: list | None = None) -> None:
        c = pool.component
        start = step.frame * step.dt if start is None else start
        params, forces, budget = self._step_uniforms(pool, step, start, in_scene)
        queue = self.device.queue
        queue.write_buffer(pool.buffers["forces"], 0, forces)
        queue.write_buffer(pool.buffers["params"], 0, params)
        looks_key = (repr(c.color), tuple(c.alpha_curve), tuple(c.size_curve))
        if looks_key != pool.looks_key:   # rebake only when the curves change (a live edit)
            queue.write_buffer(pool.buffers["looks"], 0, bake_looks(c))
            pool.looks_key = looks_key
        queue.write_buffer(pool.buffers["counters"], 0, budget)

    def _step_uniforms(self, pool: _Pool, step: StepInfo, start: float,
                       in_scene: list | None = None) -> tuple[bytes, bytes, bytes]:
        """One step's bytes for the params uniform, the forces array and the budget word of
        the counters, for the step covering [start, start + dt) seconds (this advances the
        emitter's birth bookkeeping). ``in_scene``: the scene's force entities, when known."""
        c = pool.component
        budget, velocity = pool.births.step(c, start, step.dt)
        forces, accelerate_end, kill_start = arrange(self.forces_on(pool, in_scene)[:MAX_FORCES])
        params = pack_params(
            pool.param_record, c, entity=pool.entity.index, frame=step.frame, seed=step.seed,
            dt=step.dt, budget=budget, force_count=len(forces), velocity=velocity,
            accelerate_end=accelerate_end, kill_start=kill_start)
        return (params, pack_forces(forces, step.frame * step.dt).tobytes(),
                np.array([budget], np.uint32).tobytes())

    def forces_on(self, pool: _Pool, in_scene: list | None = None) -> list:
        """The force components acting on this emitter, in scene order."""
        wanted = pool.component.affected_by
        if in_scene is None:
            in_scene = self.shared.world.components(*FORCE_KEYS)
        return [comp for ref, comp in in_scene if wanted is None or ref.name in wanted]

    # inspection --------------------------------------------------------------------------------
    def state(self, entity: EntityRef) -> dict[str, np.ndarray]:
        pool = self.pools[entity.name]
        rows = read_array(self.device, pool.buffers["particles"], PARTICLE, pool.component.capacity)
        position_age, velocity_lifetime = rows["position_age"], rows["velocity_lifetime"]
        age, lifetime = position_age[:, 3].copy(), velocity_lifetime[:, 3].copy()
        return {
            "position": np.ascontiguousarray(position_age[:, :3]),
            "velocity": np.ascontiguousarray(velocity_lifetime[:, :3]),
            "age": age,
            "lifetime": lifetime,
            "alive": age < lifetime,
        }

    def counters(self, entity: EntityRef) -> dict[str, int]:
        """Blocking read of the counters and draw args (tests and debugging)."""
        pool = self.pools[entity.name]
        counters = np.frombuffer(read_buffer(self.device, pool.buffers["counters"],
                                             COUNTERS.itemsize), COUNTERS)[0]
        args = np.frombuffer(read_buffer(self.device, pool.buffers["draw_args"], 16), np.uint32)
        out = {name: int(counters[name]) for name in COUNTERS.names or ()}
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
            out.update(alive=int(counters["alive"]), born=int(counters["born"]))
        return out


set_system("emitter", EmitterSystem)


def birth_binding(buffers: dict):
    """What binding 6 (birth_params) of the birth passes gets: the params buffer, or on a GPU,
    which never reads it, the placeholder."""
    return buffers.get("birth_placeholder", buffers["params"])


def prewarm_batch_steps(capacity: int) -> int:
    """Prewarm steps per submission for a pool of ``capacity`` slots."""
    return max(1, min(PREWARM_BATCH_STEPS, PREWARM_BATCH_WORK // capacity))


def _finish_fence(fence, mapping, steps: int) -> int:
    """Wait until the batch that wrote ``fence`` has run, unmap it; the batch's step count."""
    mapping.sync_wait()
    fence.unmap()
    return steps


@contextlib.contextmanager
def _prewarm_progress(name: str, component: Emitter, steps: int):
    """A function taking the steps just done: a one-line notice when the prewarm is long, and
    a progress bar while it runs when stderr is a terminal."""
    work = component.capacity * steps
    if work < PREWARM_NOTICE_WORK:
        yield lambda done: None
        return
    from tqdm import tqdm

    print(f"emberfx: entity '{name}': prewarming {component.prewarm:g} s = {steps:,} steps of "
          f"{component.capacity:,} slots ({work:,} particle-steps)", file=sys.stderr, flush=True)
    with tqdm(total=steps, desc=f"prewarm {name}", unit="step", file=sys.stderr,
              disable=not sys.stderr.isatty(), leave=False) as bar:
        yield bar.update
