"""A scene recorded in the portable profile: what a browser's WebGPU replays (web/page.py).

The portable profile runs the engine as a browser page would: on a device of its own with
WebGPU's default limits except ``RECORDING_LIMITS`` (the page asks its adapter for
``REQUESTED_LIMITS``, and the trace is fitted to them: fit.py), with no optional features (so
no subgroups and no timestamp queries), and the emitters' step without the one-pass strategy,
which assumes that workgroups make forward progress while others wait for them (WebGPU
promises no such thing).

``record`` builds an Engine in that profile and records every device call it makes
(core/device_calls.py): its setup, then per step the step and a draw into an output texture of
its own, kept apart (a paused page draws again from another camera). Then, for every entity
whose state the page can give (emitters, Life layers, cloth), the buffer ranges
``engine.state`` reads, so the page's ``state(name)`` reads the same bytes.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import wgpu

from emberfx.core.device_calls import DEVICE_METHODS, recording
from emberfx.core.gpu import GpuContext, limited_context, using_context
from emberfx.engine.engine import OUTPUT_FORMAT, Engine
from emberfx.systems.emitter.tuning import DEFAULT as EMITTER_DEFAULT
from emberfx.web.fit import fit_storage_buffers
from emberfx.web.trace import Trace, reads_of

BROWSER_STORAGE_BUFFERS = 10
"""storage buffers per shader stage that browsers allow at most (Chrome, 2026; WebGPU's
default is 8): the page asks for this many, and layouts that bind more are fitted (fit.py)"""
REQUESTED_LIMITS = {"max-storage-buffers-per-shader-stage": BROWSER_STORAGE_BUFFERS}
"""limits above WebGPU's defaults that the page asks its adapter for (emitter/spawn.wgsl binds
9 storage buffers, against a default of 8)"""
RECORDING_LIMITS = {"max-storage-buffers-per-shader-stage": 20}
"""the recording device's: emitter/update.wgsl binds 12 (18 for an emitter with neighbours:
emitter/neighbours.wgsl), which fit.py brings down to 10"""
PORTABLE_TUNING = dataclasses.replace(EMITTER_DEFAULT, one_pass=False)

_CONTEXTS: list[GpuContext] = []   # kept: the caches key GPU objects by id(device)


def portable_context() -> GpuContext:
    """A new device in the portable profile (each recording needs its own: objects cached for
    an earlier one were made before this recording)."""
    ctx = dataclasses.replace(limited_context(RECORDING_LIMITS), settled_readbacks=True)
    _CONTEXTS.append(ctx)
    return ctx


def portable_engine(scene, size: tuple[int, int] | None = None, *, scripts=True) -> Engine:
    """An Engine in the portable profile on a new device: the oracle the page is compared
    with, and what ``record`` records."""
    with using_context(portable_context()):
        return Engine(scene, size=size, scripts=scripts, emitter_tuning=PORTABLE_TUNING)


def state_kind(state: dict[str, np.ndarray]) -> str | None:
    """How the page decodes this entity's reads: "emitter", "life", "grid" (cloth), or None
    where it does not (the page says so)."""
    if "cells" in state:
        return "life"
    if {"age", "lifetime", "alive"} <= state.keys():
        return "emitter"
    if "position" in state and state["position"].ndim == 3:
        return "grid"
    return None


def record(scene, frames: int, size: tuple[int, int] | None = None, *, scripts=True) -> dict:
    """The trace of ``scene`` over ``frames`` steps in the portable profile (see the module's
    doc), with what the page needs besides: size, step length, camera, the output texture and
    frame uniform ids, the state reads, and a poster (the last frame as PNG bytes, RGBA array)."""
    with using_context(portable_context()) as ctx:
        trace = Trace(ctx.device)
        with recording(DEVICE_METHODS) as calls:
            engine = Engine(scene, size=size, scripts=scripts, emitter_tuning=PORTABLE_TUNING)
            w, h = engine.size
            output = engine.device.create_texture(
                label="web:output", size=(w, h, 1), format=OUTPUT_FORMAT,
                usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
        try:
            setup = trace.add(calls)
            steps, draws = [], []
            # what engine.state reads after the last two steps: a family that alternates two
            # buffers (Life) holds its state in the other one after a step of the other parity
            by_parity: dict[int, dict] = {}
            for k in range(frames):
                trace.begin_step()
                with recording(DEVICE_METHODS) as calls:
                    engine.step(1)
                steps.append(trace.add(calls))
                with recording(DEVICE_METHODS) as calls:
                    engine.draw_to(output)
                draws.append(trace.add(calls))
                if k >= frames - 2:
                    by_parity[(k + 1) % 2] = state_reads(engine, trace)
            states = by_parity[frames % 2]
            for name, spec in states.items():
                spec["parity"] = {str(p): reads[name]["reads"] for p, reads in by_parity.items()
                                  if name in reads}
            poster = engine.render()
            recorded = {
                "version": 1,
                "scene": scene.settings.name,
                "size": [w, h], "frames": frames, "fixed_dt": scene.settings.fixed_dt,
                "limits": REQUESTED_LIMITS, "output": trace.id_of(output, "the output"),
                "frame_buffer": trace.id_of(engine.resources.buffer_view("frame").buffer,
                                            "the frame uniform"),
                "camera": camera_of(engine), "states": states,
                "scripted": [e.name for e in scene.entities if e.script] if scripts else [],
                "camera_locked": [e.name for e in scene.entities if getattr(
                    e.components.get("collider"), "shape", None) == "depth"],
                "setup": setup, "steps": steps, "draws": draws, "blobs": trace.blobs,
                "poster": poster,
            }
            recorded["fitted"] = fit_storage_buffers(recorded, BROWSER_STORAGE_BUFFERS)
            return recorded
        finally:
            engine.close()


def state_reads(engine: Engine, trace: Trace) -> dict[str, dict]:
    """For each entity whose state the page can give: how it decodes, the buffer ranges
    ``engine.state`` reads now, and the arrays' shapes."""
    states = {}
    for name in engine.entity_names():
        with recording(DEVICE_METHODS) as calls:
            state = engine.state(name)
        kind = state_kind(state)
        if kind is not None:
            states[name] = {"kind": kind, "reads": reads_of(trace, calls),
                            "shapes": {k: list(v.shape) for k, v in state.items()}}
    return states


def camera_of(engine: Engine) -> dict:
    """The scene camera as the page's orbit camera starts from it."""
    c = engine.camera
    return {"kind": c.kind, "position": list(c.position), "target": list(c.target),
            "up": list(c.up), "fov_deg": c.fov_deg, "near": c.near, "far": c.far,
            "fit_scale": c.fit_scale(engine.size[0] / engine.size[1])}
