"""Per-particle colour: ``p.color`` in an emitter's modifiers and ``inherit_color`` on its
sub-emitter links.

An emitter *carries colour* when its ``init`` or ``update`` modifier uses ``.color`` of the
particle state, or when a link into it (``on_death``, ``on_collision`` or ``on_age`` of any
emitter) has ``inherit_color = true``. Only then does it get what this module declares:

- the buffer ``<e>/color``: one vec4f per slot (linear rgb, straight alpha), white at every
  birth unless the birth comes from an event record over an inheriting link (the parent's
  colour) and before ``init`` runs; ``Engine.state(name)["color"]`` reads it as (n, 4) float32;
- ``color: vec4f`` in ``ParticleState`` (after the custom attributes), which the generated code
  of systems/emitter/modifiers.py loads and stores through the bindings below;
- in its draw, the colour over life (or a ``color`` modifier's result, which sees ``p.color``)
  times the carried colour (``HAS_COLOR``);
- as an event target, ``<e>/event_colors`` beside its event records (one vec4f per record),
  written by the sources' write passes (emitter/event_color_write.wgsl) and read by its spawn;
- no batch: such an emitter runs alone, as one with custom attributes does.

An emitter that carries no colour keeps its 32-byte particles, its shaders and its batch: none
of this reaches it. The colour needs no upload per step.

What the feature adds, and where (emitter/features.py lists the features):
  applies            every emitter; whether it carries colour is its compiled program's say
                     (``program.color``), so the hooks below ask the program
  slot buffers       ``color``, where it carries colour
  program batch key  None where it carries colour: it runs alone
  program bindings   ``particle_colors`` (and the spawn's ``event_colors``) in the passes its
                     program derives
  rebuilds           a recompile that makes the colour come or go builds the emitter again; an
                     added emitter whose links give colour to emitters made without it builds
                     them again
  state              ``color``: (capacity, 4) float32
The event colours (``event_colors``, the sources' write pass) are wired by emitter/events.py
through the functions here.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np
import wgpu

from emberfx.core import wgsl
from emberfx.core.readback import read_array
from emberfx.systems.emitter.feature import EmitterFeature

if TYPE_CHECKING:
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.modifiers import Program
    from emberfx.systems.emitter.pool import Pool

BUFFER = "color"               # <e>/color
EVENT_BUFFER = "event_colors"  # <target>/event_colors
COLOR = np.dtype((np.float32, (4,)))
"""one vec4f per slot or record"""
STATE_FIELD = "    color: vec4f,"
"""the field ParticleState gains (after the custom attributes)"""
PARTICLE_COLORS = "particle_colors"   # the generated code's name of <e>/color
_SPAWN = "emitter/spawn.wgsl"
_EVENT_WRITE = "emitter/event_write.wgsl"
_EVENT_HOOK = {"emitter/event_color.wgsl": "emitter/event_color_write.wgsl"}
_CARRIED = {"emitter/carried_color.wgsl": "emitter/carried_color_read.wgsl"}
# the write pass for a target that carries colour, by whether the source carries one too
_WRITE_SHADERS = {
    False: wgsl.derive("emitter/event_write+color.wgsl", _EVENT_WRITE, _EVENT_HOOK),
    True: wgsl.derive("emitter/event_write+color+carried.wgsl", _EVENT_WRITE,
                      {**_EVENT_HOOK, **_CARRIED}),
}
_USES_COLOR = re.compile(r"\.\s*color\b")


# whether an emitter carries colour ----------------------------------------------------------
def uses_color(texts) -> bool:
    """Whether modifier code (``init``, ``update``) uses ``.color`` of the particle state."""
    for text in texts:
        code = re.sub(r"/\*.*?\*/", " ", re.sub(r"//[^\n]*", "", text), flags=re.S)
        if _USES_COLOR.search(code):
            return True
    return False


def inherited(emitters, name: str) -> bool:
    """Whether a link into emitter ``name`` inherits colour (``emitters``: the world's
    (ref, Emitter) pairs)."""
    return any(spawn.emitter == name and spawn.inherit_color
               for _, component in emitters for _, spawn in component.sub_emitters())


def carries(pool: Pool) -> bool:
    """Whether the pool carries a colour per particle (its program says)."""
    return pool.program is not None and pool.program.color


# buffers --------------------------------------------------------------------------------------
def buffer_sizes(capacity: int, carried: bool) -> dict[str, tuple[int, int]]:
    """The pool's ``color`` buffer, if it carries colour."""
    return {BUFFER: (capacity * COLOR.itemsize, wgpu.BufferUsage.STORAGE)} if carried else {}


def make_event_colors(resources, pool: Pool, count: int, family: str) -> None:
    """A target carrying colour: its ``event_colors`` beside its ``count`` event records (of
    the same family, so both go together)."""
    if not carries(pool):
        return
    name = pool.entity.name
    pool.buffers[EVENT_BUFFER] = resources.buffer(
        name, EVENT_BUFFER, max(1, count) * COLOR.itemsize,
        wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC,
        family=family, what=f"entity '{name}': the colours of its event records")


def targets_to_rebuild(system, pool: Pool) -> list:
    """The pools the links of ``pool`` give colour that were made carrying none (a source
    spawned, or its links edited, after them): they are built again to carry it."""
    out = []
    for _, spawn in pool.component.sub_emitters():
        target = system.pools.get(spawn.emitter)
        if spawn.inherit_color and target is not None and not carries(target) \
                and target not in out:
            out.append(target)
    return out


# the generated code of an emitter carrying colour (systems/emitter/modifiers.py) ------------
def declarations(base: str, group: int, access: str) -> list[str]:
    """Its bindings in pass ``base``: the particles' colours, and the spawn's event colours."""
    out = [f"@group({group}) @binding(1) var<storage, {access}> {PARTICLE_COLORS}: "
           "array<vec4f>;"]
    if base == _SPAWN:
        out.append(f"@group({group}) @binding(2) var<storage, read> {EVENT_BUFFER}: "
                   "array<vec4f>;")
    return out


def birth_color(base: str) -> list[str]:
    """``fn inherited_color() -> vec4f``: a birth's colour before ``init`` (the spawn's births
    from event records: the record's colour; every other birth: white)."""
    if base != _SPAWN:
        return ["fn inherited_color() -> vec4f { return vec4f(1.0); }"]
    return ["fn inherited_color() -> vec4f {",
            "    if (EVENT_TARGET && birth_record != NO_EVENT_RECORD) {",
            f"        return {EVENT_BUFFER}[birth_record];",
            "    }",
            "    return vec4f(1.0);",
            "}"]


UPDATE_HOOKS = ("var<private> modifier_color: vec4f;",
                f"modifier_color = {PARTICLE_COLORS}[slot];",
                f"{PARTICLE_COLORS}[slot] = modifier_color;")
"""(declaration, load, store) of the colour across an `update`'s substeps"""


def bindings(base: str, buffers: dict) -> dict:
    """What the generated code of pass ``base`` binds for the colour (from the pool's)."""
    out = {PARTICLE_COLORS: buffers[BUFFER]}
    if base == _SPAWN:
        out[EVENT_BUFFER] = buffers[EVENT_BUFFER]
    return out


# a source's write pass into a target carrying colour ------------------------------------------
def event_write(source: Pool, target: Pool, inherits: list[bool]) -> tuple[str, dict, dict]:
    """(shader, extra bindings, constants) of the write pass of ``source``'s links (whether
    each inherits colour, in the pass's order) into ``target``, the first target of the pass."""
    if target.batch is not None or not carries(target):
        return _EVENT_WRITE, {}, {}
    extra = {"source_looks": source.buffers["looks"],
             EVENT_BUFFER: target.buffers[EVENT_BUFFER]}
    if carries(source):
        extra["source_colors"] = source.buffers[BUFFER]
    mask = sum(1 << k for k, inherit in enumerate(inherits) if inherit)
    return _WRITE_SHADERS[carries(source)], extra, {"INHERIT_COLORS": mask}


# what Engine.state reads ------------------------------------------------------------------------
def arrays(device, pool: Pool) -> dict[str, np.ndarray]:
    """``{"color": (capacity, 4) float32}`` for a pool carrying colour, else nothing."""
    if not carries(pool):
        return {}
    return {BUFFER: read_array(device, pool.buffers[BUFFER], COLOR, pool.component.capacity)}


class ColorFeature(EmitterFeature):
    """The feature as emitter/features.py runs it."""
    name = "color"

    def applies(self, component) -> bool:
        return True   # (whether the emitter carries colour: its program says)

    def slot_buffers(self, program: Program, capacity: int) -> dict[str, tuple[int, int]]:
        return buffer_sizes(capacity, program.color)

    def program_batch_key(self, program: Program) -> tuple | None:
        return None if program.color else ()

    def program_bindings(self, program: Program, base: str, buffers: dict) -> dict:
        return bindings(base, buffers) if program.color else {}

    def rebuilds_for(self, pool: Pool, program: Program) -> bool:
        return program.color != carries(pool)   # its colour buffer comes or goes

    def rebuilds(self, system: EmitterHost, pool: Pool) -> list[Pool]:
        return targets_to_rebuild(system, pool)

    def state(self, device, pool: Pool) -> dict[str, np.ndarray]:
        return arrays(device, pool)
