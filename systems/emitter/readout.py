"""Blocking reads of one emitter's GPU state for ``Engine.state``, tests and the inspector, and
its stats from the frame's readback ring; never the frame loop's own path (a blocking read waits
for the GPU, readback.py). ``pool`` is the system's record of the emitter (system.Pool): its
buffers are its own or views into a batch's arenas, so each read sees only its emitter."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from emberfx.core.readback import read_array, read_buffer
from emberfx.systems.emitter import features
from emberfx.systems.emitter.structs import COUNTERS, PARTICLE

if TYPE_CHECKING:
    from emberfx.systems.emitter.events import EventWiring
    from emberfx.systems.emitter.pool import Pool


def state(device, pool: Pool) -> dict[str, np.ndarray]:
    """Every slot's position, velocity, age, lifetime and alive flag, plus custom attributes
    and, for an emitter carrying colour, ``color``."""
    rows = read_array(device, pool.buffers["particles"], PARTICLE, pool.component.capacity)
    position_age, velocity_lifetime = rows["position_age"], rows["velocity_lifetime"]
    age, lifetime = position_age[:, 3].copy(), velocity_lifetime[:, 3].copy()
    out = {
        "position": np.ascontiguousarray(position_age[:, :3]),
        "velocity": np.ascontiguousarray(velocity_lifetime[:, :3]),
        "age": age,
        "lifetime": lifetime,
        "alive": age < lifetime,
    }
    out.update(features.state(device, pool))   # what the features keep (attributes, colour)
    return out


def counters(device, pool: Pool) -> dict:
    """The counters (per-kind event counts as lists), the draw arguments and the last budget."""
    record = np.frombuffer(read_buffer(device, pool.buffers["counters"], COUNTERS.itemsize),
                           COUNTERS)[0]
    args = np.frombuffer(read_buffer(device, pool.buffers["draw_args"], 16), np.uint32)
    out = {name: record[name].tolist() for name in COUNTERS.names or () if name != "reserved"}
    out["draw_vertices"], out["draw_instances"] = int(args[0]), int(args[1])
    out["step_budget"] = pool.births.last_budget
    return out


def alive_list(device, pool: Pool) -> np.ndarray:
    """The compacted alive list (the draw's instances), alive-count long."""
    count = counters(device, pool)["alive"]
    return read_array(device, pool.buffers["alive_list"], np.uint32, count)


def stats(pool: Pool, readback: dict[str, bytes], events: EventWiring) -> dict:
    """Capacity, and alive, born and event counts from the ring's copy of the counters (a
    batched emitter's record lies in its batch's region)."""
    if pool.batch is None:
        data = readback.get(pool.entity.name)
    else:
        data = readback.get(pool.batch.name)
        at = pool.member * COUNTERS.itemsize
        data = data[at:at + COUNTERS.itemsize] if data is not None else None
    out = {"capacity": pool.component.capacity}
    if data is not None:
        record = np.frombuffer(data, COUNTERS)[0]
        out.update(alive=int(record["alive"]), born=int(record["born"]),
                   **events.stats(pool, record))
        sim = pool.batch.sim if pool.batch is not None else pool.sim
        if sim is not None and sim.one_pass:   # waits that gave up: that step is wrong
            out["look_back_stalls"] = int(record["tickets"])
    return out
