"""Emitter features as plug-ins: each declares, in its own module, what it adds to an emitter.

A feature (EmitterFeature, emitter/feature.py) says whether it applies to an emitter, what it
adds to the batch key (emitters batch only with emitters whose features add the same; None: the
emitter runs alone), the buffers it owns (one set per simulation: a lone pool's, or a batch's,
made from its first member), the records it keeps per emitter (laid out for one emitter or many
by layout.py, packed after an edit by step_upload.py), the WGSL parts it swaps into each pass
shader (``//! include`` swaps, wgsl.derive), the bindings it adds to those passes, the draw it
gives the pool in place of the sprite draw (if any), what it writes each step, why an
emitter's values cannot be used, whether the one-pass step may run it, and what it makes per
simulation (buffers sized by the simulation, its own state) and the passes it puts into the
simulation's step. A batch also asks its features for the arenas they add to it (each decides
per batch, from the members, the batch's size and the system's tuning), their RENDER-phase
passes before the alpha sort, what that sort reads in place of the alive lists (and how its
passes change), and what the sprite draws bind in place of the batch's buffers. What the
component alone cannot say, the emitter's compiled program (its modifiers and the links into it)
does: a feature may add buffers per slot, a batch key part (or run it alone) and bindings of the
generated code from it, say when a new program needs the emitter built again and which other
emitters an added one makes build again, and what ``Engine.state`` reads for it. The shared
shaders stay branch-free of any one emitter: a feature's data comes from its bindings, its
records and the emitter's params record, so every emitter with the same features runs the same
pipeline, batched or not.

The system and the pass builders call the functions below, never a feature directly; adding a
feature is one module and its WGSL, plus its entry in FEATURES. docs/architecture.md walks
through the mesh shape (emitter/mesh_shape.py) as the example; mesh particles
(emitter/mesh_particles.py) show the draw and the upload, the looks (emitter/looks.py) the
records, the neighbours (emitter/neighbours_feature.py) a simulation's buffers and passes, the
culling (emitter/culling.py) a batch's arenas, render passes, sort inputs and draw inputs, the
per-particle colour (emitter/color.py) what follows the program.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from emberfx.core import wgsl
from emberfx.systems.emitter.attributes import AttributesFeature
from emberfx.systems.emitter.color import ColorFeature
from emberfx.systems.emitter.contacts import ContactsFeature
from emberfx.systems.emitter.culling import CullingFeature
from emberfx.systems.emitter.emit_light import EmitLightFeature
from emberfx.systems.emitter.event_marks import EventMarksFeature
from emberfx.systems.emitter.feature import EmitterFeature, Record
from emberfx.systems.emitter.feeds import FeedsFeature
from emberfx.systems.emitter.gas_fields import GasFieldsFeature
from emberfx.systems.emitter.life_shape import LifeShapeFeature
from emberfx.systems.emitter.looks_feature import LooksFeature
from emberfx.systems.emitter.mesh_particles import MeshParticlesFeature
from emberfx.systems.emitter.mesh_shape import MeshShapeFeature
from emberfx.systems.emitter.neighbours_feature import NeighboursFeature
from emberfx.systems.emitter.opacity import ReceiveShadowsFeature, ShadowCastFeature

if TYPE_CHECKING:
    import numpy as np

    from emberfx.core.frame_graph import Pass
    from emberfx.core.resources import BufferView
    from emberfx.systems.emitter.batches import Simulation
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.layout import Layout
    from emberfx.systems.emitter.modifiers import Program
    from emberfx.systems.emitter.pool import Pool

__all__ = ["FEATURES", "EmitterFeature", "Record"]


# every feature, in the order they apply
FEATURES: tuple[EmitterFeature, ...] = (
    ContactsFeature(), GasFieldsFeature(), FeedsFeature(), EventMarksFeature(),
    AttributesFeature(), LooksFeature(), MeshShapeFeature(), LifeShapeFeature(),
    MeshParticlesFeature(),
    NeighboursFeature(), CullingFeature(), ColorFeature(), ShadowCastFeature(),
    ReceiveShadowsFeature(), EmitLightFeature())
_UPLOADING = tuple(f for f in FEATURES if type(f).upload is not EmitterFeature.upload)
# the features that may find a pool stale: asked on every spawn or delete, for every pool
_STALING = tuple(f for f in FEATURES if type(f).stale is not EmitterFeature.stale)
_variants: dict[tuple, str] = {}   # (base, swaps) -> derived shader name, one per combination


def applying(component) -> list[EmitterFeature]:
    return [f for f in FEATURES if f.applies(component)]


def batch_key(component, resolve) -> tuple | None:
    """What the features add to the emitter's batch key, or None when one makes it run alone."""
    parts: list = []
    for f in applying(component):
        key = f.batch_key(component, resolve)
        if key is None:
            return None
        parts += (f.name, *key)
    return tuple(parts)


def records(component) -> dict[str, tuple[EmitterFeature, Record]]:
    """The per-emitter records of the features the emitter uses, by key, with their feature."""
    return {k: (f, r) for f in applying(component) for k, r in f.records().items()}


def draw(system: EmitterHost, pool: Pool) -> list[Pass] | None:
    """The draw a feature gives the pool in place of the sprite draw, or None."""
    return next((d for f in applying(pool.component) if (d := f.draw(system, pool)) is not None),
                None)


def upload(system: EmitterHost, pool: Pool, acting: list, edited: bool) -> None:
    """Each step, per emitter: only the features that apply and have something to write are
    asked (looked at again after an edit, ``edited``, or when ``pool.uploading`` is None)."""
    if edited or pool.uploading is None:
        pool.uploading = tuple(f for f in _UPLOADING
                               if f.applies(pool.component) and f.uploads(pool))
    for f in pool.uploading:
        f.upload(system, pool, acting)


def one_pass(component) -> bool:
    return all(f.one_pass(component) for f in applying(component))


def arenas(system: EmitterHost, members: list[Pool],
           layout: Layout) -> dict[str, tuple[int, int]]:
    """The buffers the features add to a batch of ``members`` (by key: bytes, usage)."""
    return {k: v for f in applying(members[0].component)
            for k, v in f.arenas(system, members, layout).items()}


def simulation(system: EmitterHost, pool: Pool, sim: Simulation) -> None:
    for f in applying(pool.component):
        f.simulation(system, pool, sim)


def step_passes(system: EmitterHost, pool: Pool, sim: Simulation,
                passes: list[Pass]) -> list[Pass]:
    for f in applying(pool.component):
        passes = f.step_passes(system, pool, sim, passes)
    return passes


def render_passes(system: EmitterHost, pool: Pool, sim: Simulation) -> list[Pass]:
    """The features' RENDER-phase passes that run before the simulation's alpha sort."""
    return [p for f in applying(pool.component) for p in f.render_passes(system, pool, sim)]


def sort_inputs(component, buffers: dict[str, BufferView]) -> dict[str, BufferView]:
    """What the simulation's alpha sort reads: its buffers, with what the features put in
    their place."""
    out = dict(buffers)
    for f in applying(component):
        out.update(f.sort_inputs(buffers))
    return out


def sort_passes(component, buffers: dict[str, BufferView], passes: list[Pass]) -> list[Pass]:
    for f in applying(component):
        passes = f.sort_passes(buffers, passes)
    return passes


def draw_inputs(component, buffers: dict[str, BufferView]) -> dict[str, BufferView]:
    """What the simulation's sprite draws bind: its buffers, with what the features put in
    their place."""
    out = dict(buffers)
    for f in applying(component):
        out.update(f.draw_inputs(buffers))
    return out


def part_bindings(pool: Pool, base: str) -> dict:
    """What pass shader ``base`` binds from the emitter's own parts: the features', and what
    its compiled program's code adds (its attributes, a carried colour)."""
    out = {k: v for f in applying(pool.component) for k, v in f.part_bindings(pool, base).items()}
    if pool.program is not None:
        out.update(pool.program.bindings(base, pool.buffers))
    return out


def part_constants(pool: Pool, base: str) -> dict:
    return {k: v for f in applying(pool.component)
            for k, v in f.part_constants(pool, base).items()}


def stand_ins(pool: Pool) -> dict[str, BufferView]:
    return {k: v for f in applying(pool.component) for k, v in f.stand_ins(pool).items()}


def slot_buffers(component, program: Program, capacity: int) -> dict[str, tuple[int, int]]:
    return {k: v for f in applying(component)
            for k, v in f.slot_buffers(program, capacity).items()}


def program_batch_key(component, program: Program) -> tuple | None:
    """What the features add to the batch key from the emitter's compiled program, or None
    when one makes it run alone."""
    parts: list = []
    for f in applying(component):
        key = f.program_batch_key(program)
        if key is None:
            return None
        parts += key
    return tuple(parts)


def program_bindings(component, program: Program, base: str, buffers: dict) -> dict:
    return {k: v for f in applying(component)
            for k, v in f.program_bindings(program, base, buffers).items()}


def rebuilds_for(pool: Pool, program: Program) -> bool:
    return any(f.rebuilds_for(pool, program) for f in applying(pool.component))


def rebuilds(system: EmitterHost, pool: Pool) -> list[Pool]:
    out: list[Pool] = []
    for f in applying(pool.component):
        out += [p for p in f.rebuilds(system, pool) if p not in out]
    return out


def stale(system: EmitterHost, pool: Pool) -> bool:
    return any(f.applies(pool.component) and f.stale(system, pool) for f in _STALING)


def state(device, pool: Pool) -> dict[str, np.ndarray]:
    return {k: v for f in applying(pool.component) for k, v in f.state(device, pool).items()}


def buffers(component, resolve) -> dict[str, bytes]:
    return {k: v for f in applying(component) for k, v in f.buffers(component, resolve).items()}


def includes(component, base: str) -> dict[str, str]:
    return {k: v for f in applying(component) for k, v in f.includes(base).items()}


def constants(component, base: str, sim: Simulation) -> dict:
    return {k: v for f in applying(component) for k, v in f.constants(base, sim).items()}


def bindings(component, base: str, buffers: dict) -> dict:
    return {k: v for f in applying(component) for k, v in f.bindings(base, buffers).items()}


def problem(component, resolve) -> str | None:
    return next((p for f in applying(component) if (p := f.problem(component, resolve))), None)


def shader(component, base: str) -> str:
    """Pass shader ``base`` with the parts of the features the emitter uses swapped in (the
    same name for every emitter that uses the same features)."""
    swaps = includes(component, base)
    if not swaps:
        return base
    key = (base, tuple(sorted(swaps.items())))
    name = _variants.get(key)
    if name is None:
        digest = hashlib.sha256(repr(key).encode()).hexdigest()[:12]
        name = _variants[key] = wgsl.derive(f"{base.removesuffix('.wgsl')}+{digest}.wgsl",
                                            base, dict(swaps))
    return name
