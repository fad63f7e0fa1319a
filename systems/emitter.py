"""The Emitter system (seed 002): a fixed-capacity particle pool with no free list.

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
  "atomic": seed 002 as written: each free slot takes a unit with atomicSub and undoes an underflow.
  "ticket": seed 002's variant: a monotonic atomicAdd ticket, born while ticket < budget.
  The atomic modes give exact counts but which free slots win depends on scheduling, so states
  are reproducible only when the budget covers every free slot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import wgpu

from emberfx.frame_graph import (SIMULATION_PHASES, ClearBuffer, Dispatch, Draw, FrameGraph, Pass,
                                 Phase)
from emberfx.layout import struct_dtype
from emberfx.readback import read_array, read_buffer
from emberfx.registry import set_system
from emberfx.scan import PrefixScan
from emberfx.sprites import sprite_pipeline
from emberfx.sort import KeySort
from emberfx.system import EntityRef, Readback, StepInfo, System
from emberfx.systems.emitter_component import Emitter
from emberfx.systems.emitter_params import (BLOCK, LOOKS, PARAMS, Births, bake_looks,
                                            pack_params)
from emberfx.systems.forces import FORCE, FORCE_KEYS, arrange, pack_forces

ALLOCATION_MODES = {"ordered": 0, "atomic": 1, "ticket": 2}
MAX_FORCES = 64                  # force records one emitter can take (attractors, fields, zones)
PREWARM_FRAMES = 1 << 31         # birth-seed frames used while prewarming
PARTICLE = struct_dtype("emitter/types.wgsl", "Particle")
COUNTERS = struct_dtype("emitter/types.wgsl", "Counters")


@dataclass
class _Pool:
    """The GPU side of one emitter entity."""
    entity: EntityRef
    component: Emitter
    buffers: dict[str, object]
    passes: list[Pass]
    scans: dict[str, object] = field(default_factory=dict)   # PrefixScan / KeySort helpers
    births: Births = field(default_factory=Births)
    looks_key: tuple | None = None   # the curves last baked into the looks buffer
    param_record: np.ndarray = field(default_factory=lambda: np.zeros((), PARAMS))


class EmitterSystem(System):
    key = "emitter"

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.pools: dict[str, _Pool] = {}

    def _draw_pipeline(self, blend: str):
        return sprite_pipeline(self.device, "emitter/draw.wgsl", blend, self.shared.scene_format,
                               self.shared.depth_format)

    # lifecycle ---------------------------------------------------------------------------------
    def add(self, entity: EntityRef, component: Emitter) -> None:
        n = component.capacity
        name = entity.name
        blocks = math.ceil(n / BLOCK)
        self.gpu.check_buffer_size(n * PARTICLE.itemsize,
                                   f"entity '{name}': emitter.capacity = {n:,} ({PARTICLE.itemsize} bytes per particle)")
        ordered = component.allocation == "ordered"
        buffers = {
            "params": self.uniform_buffer(f"{name}/params", PARAMS.itemsize),
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
            buffers["free_mask"] = self.storage_buffer(f"{name}/free_mask", blocks * 8 * 4)
            buffers["block_free"] = self.storage_buffer(f"{name}/block_free", blocks * 4)
        else:
            buffers["alive_mask"] = self.storage_buffer(f"{name}/alive_mask", blocks * 8 * 4)
        b = buffers
        r = {k: f"{name}/{k}" for k in buffers}   # resource names for the frame graph
        grid = self.gpu.grid(blocks)
        prefix = f"{name}:emitter"
        gpu = self.gpu
        scans = {"alive": PrefixScan(gpu, f"{prefix}:alive", b["block_alive"], r["block_alive"], blocks)}

        def dispatch(shader, groups_, buffers_, **constants):
            pipeline = gpu.compute_pipeline(f"emitter/{shader}.wgsl", constants)
            return Dispatch(pipeline, (gpu.bind_group(f"{prefix}:{shader}", pipeline, 0, buffers_),),
                            groups_)

        passes = [
            Pass(f"{prefix}:clear", Phase.CLEAR, ClearBuffer(b["counters"], 4, COUNTERS.itemsize - 4),
                 writes=(r["counters"],)),
            self._update_pass(name, component, buffers, bool(self.shared.world.components(*FORCE_KEYS))),
        ]
        alive_scan = scans["alive"]
        if ordered:
            # free ranks -> alive counts per block -> alive ranks; then one pass gives births and
            # writes the alive list (emitter/count.wgsl and spawn.wgsl explain the arithmetic)
            free_scan = scans["free"] = PrefixScan(gpu, f"{prefix}:free", b["block_free"],
                                                   r["block_free"], blocks)
            passes += free_scan.passes()
            passes.append(Pass(
                f"{prefix}:count", Phase.SIMULATE,
                dispatch("count", (math.ceil(blocks / 256), 1, 1),
                         [b["params"], b["block_free"], free_scan.total[0], b["block_alive"],
                          b["counters"]]),
                reads=(r["params"], r["block_free"], free_scan.total_resource, r["counters"]),
                writes=(r["block_alive"], r["counters"])))
            passes += alive_scan.passes()
            passes.append(Pass(
                f"{prefix}:spawn", Phase.SIMULATE,
                dispatch("spawn", grid, [b["params"], b["particles"], b["free_mask"],
                                         b["block_free"], b["block_alive"], b["alive_list"]]),
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
                dispatch("depth", grid, [self.shared.frame_uniform, b["particles"], b["alive_list"],
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
                                    gpu.bind_group(f"{prefix}:args", prepare, 1, [b["draw_args"]]))),
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
        pool = _Pool(entity, component, buffers, passes, scans=scans)
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
        from the scene's own frames."""
        dt, seed = self.shared.fixed_dt, self.shared.seed
        steps = round(pool.component.prewarm / dt)
        graph = FrameGraph([p for p in pool.passes if p.phase in SIMULATION_PHASES
                            and p.phase != Phase.READBACK], self.uploaded())
        for k in range(steps):
            self._upload_step(pool, StepInfo(frame=PREWARM_FRAMES + k, dt=dt, seed=seed),
                              start=(k - steps) * dt)
            encoder = self.device.create_command_encoder(label=f"{pool.entity.name}:emitter:prewarm")
            graph.encode(encoder, {})
            self.device.queue.submit([encoder.finish()])
        pool.births.last_position = None

    def _update_pass(self, name: str, component: Emitter, b: dict, has_forces: bool) -> Pass:
        """The update marks free slots (ordered: births come in spawn) or, having spawned itself
        (atomic, ticket), the final alive slots. Without forces in the scene the force loop is
        compiled out (HAS_FORCES), much faster on CPU backends."""
        ordered = component.allocation == "ordered"
        marks = ("free_mask", "block_free") if ordered else ("alive_mask", "block_alive")
        pipeline = self.gpu.compute_pipeline(
            "emitter/update.wgsl", {"ALLOCATION": ALLOCATION_MODES[component.allocation],
                                    "HAS_FORCES": has_forces})
        group = self.gpu.bind_group(f"{name}:emitter:update", pipeline, 0,
                                    [b["params"], b["particles"], b["counters"], b[marks[0]],
                                     b[marks[1]], b["forces"]])
        r = lambda k: f"{name}/{k}"  # noqa: E731
        return Pass(f"{name}:emitter:update", Phase.SIMULATE,
                    Dispatch(pipeline, (group,), self.gpu.grid(math.ceil(component.capacity / BLOCK))),
                    reads=(r("params"), r("particles"), r("counters"), r("forces")),
                    writes=(r("particles"), r("counters"), r(marks[0]), r(marks[1])))

    def world_changed(self) -> None:
        """Entities were spawned or deleted: recompile updates whose force loop is now wrong."""
        has_forces = bool(self.shared.world.components(*FORCE_KEYS))
        for name, pool in self.pools.items():
            update = next(p for p in pool.passes if p.name == f"{name}:emitter:update")
            if update.op.pipeline is not self._update_pass(name, pool.component, pool.buffers,
                                                           has_forces).op.pipeline:
                i = pool.passes.index(update)
                pool.passes[i] = self._update_pass(name, pool.component, pool.buffers, has_forces)

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
        # params are written every step; particles start zeroed (= all dead); the budget word of
        # counters is written every step (the rest is cleared by the clear pass)
        names = {f"{n}/{k}" for n in self.pools
                 for k in ("params", "particles", "counters", "forces", "looks")}
        for pool in self.pools.values():
            for scan in pool.scans.values():
                names |= scan.uploaded()
        return names

    def readbacks(self) -> list[Readback]:
        return [Readback(n, "emitter", f"{n}/counters", pool.buffers["counters"], 0, COUNTERS.itemsize)
                for n, pool in self.pools.items()]

    def before_step(self, step: StepInfo) -> None:
        for pool in self.pools.values():
            self._upload_step(pool, step)

    def _upload_step(self, pool: _Pool, step: StepInfo, start: float | None = None) -> None:
        c = pool.component
        start = step.frame * step.dt if start is None else start
        budget, velocity = pool.births.step(c, start, step.dt)
        forces, accelerate_end, kill_start = arrange(self.forces_on(pool)[:MAX_FORCES])
        queue = self.device.queue
        queue.write_buffer(pool.buffers["forces"], 0,
                           pack_forces(forces, step.frame * step.dt).tobytes())
        queue.write_buffer(pool.buffers["params"], 0, pack_params(
            pool.param_record, c, entity=pool.entity.index, frame=step.frame, seed=step.seed,
            dt=step.dt, budget=budget, force_count=len(forces), velocity=velocity,
            accelerate_end=accelerate_end, kill_start=kill_start))
        looks_key = (repr(c.color), tuple(c.alpha_curve), tuple(c.size_curve))
        if looks_key != pool.looks_key:   # rebake only when the curves change (a live edit)
            queue.write_buffer(pool.buffers["looks"], 0, bake_looks(c))
            pool.looks_key = looks_key
        queue.write_buffer(pool.buffers["counters"], 0, np.array([budget], np.uint32).tobytes())

    def forces_on(self, pool: _Pool) -> list:
        """The force components acting on this emitter, in scene order."""
        wanted = pool.component.affected_by
        return [comp for ref, comp in self.shared.world.components(*FORCE_KEYS)
                if wanted is None or ref.name in wanted]

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
        out = {name: int(counters[name]) for name in COUNTERS.names}
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
