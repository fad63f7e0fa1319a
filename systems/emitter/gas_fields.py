"""Vector fields whose samples are a gas's live velocity (``[entity.force_field] kind =
"vector_field"``, ``source = "<gas>"``), as an emitter feature.

The gas publishes its velocity at its cells' centres each step as ``<gas>/centres``: three
floats per cell, x fastest, in the layout of a vector volume (systems/forces/volumes.py), with
the gas's box (its ``center``, resolution x cell, not turned). An emitter such a field acts on
keeps a region of that size in its packed volumes (Contacts, emitter/contacts.py; zeros until
the first copy) and the GasFieldsFeature below puts a copy pass into its step,

  SIMULATE  <e>:emitter:gas_velocity:<k>   <gas>/centres -> the region of <e>/volumes

a copy_buffer_to_buffer on the GPU: no readback, and the update (which reads the volumes) runs
after it, the copy after the gas's step (which writes the centres), as the frame graph orders
readers after writers. The update then samples it trilinearly each substep as any vector field
(emitter/fields.wgsl), in the field's `mode` (velocity: pulled towards it with `tightness`).

This module imports nothing of the gas family: it reads the gas component's public fields
(``resolution``, ``center``, ``edge``) through the world query and binds the gas's buffer by
resource name, as a trail binds its emitter's particles.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from emberfx.core.frame_graph import Pass, Phase
from emberfx.core.resources import BufferView
from emberfx.systems.emitter.feature import EmitterFeature

if TYPE_CHECKING:
    from emberfx.systems.emitter.batches import Simulation
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool

CENTRES = "centres"
"""the key of the gas's cell-centred velocity buffer (``<gas>/centres``)"""
VECTOR_FLOATS = 3   # floats per sample of a vector volume


def gas_component(system, name: str):
    """The gas component of entity ``name``, or None where it has none (deleted, or not yet)."""
    return next((c for ref, c in system.query("gas") if ref.name == name), None)


def source_present(system, force) -> bool:
    """False for a gas-sourced vector field whose gas does not exist (deleted): it acts on
    nothing until a gas of that name comes back."""
    source = getattr(force, "source", None)
    return source is None or gas_component(system, source) is not None


def gas_box(gas) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(centre, full edge lengths) of a gas component's box."""
    return tuple(gas.center), tuple(gas.edge * n for n in gas.resolution)


class GasSamples:
    """One emitter's stand-in samples for the gas-sourced fields acting on it: a zero array of
    the gas's (nz, ny, nx, 3) shape per gas, the same object while the gas keeps its grid (the
    contacts pack the volumes again only when an array's identity changes)."""

    def __init__(self, system):
        self.system = system
        self.arrays: dict[str, np.ndarray] = {}
        self.copies: dict[int, tuple[tuple, Pass]] = {}   # field index -> (what it copies, pass)

    def samples(self, name: str) -> np.ndarray | None:
        gas = gas_component(self.system, name)
        if gas is None:
            return None
        shape = (*reversed(gas.resolution), VECTOR_FLOATS)
        array = self.arrays.get(name)
        if array is None or array.shape != shape:
            array = np.zeros(shape, np.float32)
            array.setflags(write=False)
            self.arrays[name] = array
        return array

    def box(self, field) -> tuple[tuple, tuple, tuple]:
        """(centre, size, rotation) of a gas-sourced vector field's box: its gas's."""
        gas = gas_component(self.system, field.source)
        if gas is None:   # (its slot was packed while the gas existed: left where it was)
            return field.center, field.box_size, (0.0, 0.0, 0.0)
        center, size = gas_box(gas)
        return center, size, (0.0, 0.0, 0.0)


class GasFieldsFeature(EmitterFeature):
    """Every emitter's step copies the live velocity of the gases its source fields name."""
    name = "gas_fields"

    def applies(self, component) -> bool:
        return True   # what acts on an emitter is the world's, not the component's

    def step_passes(self, system: EmitterHost, pool: Pool, sim: Simulation,
                    passes: list[Pass]) -> list[Pass]:
        prefix = f"{pool.entity.name}:emitter:gas_velocity:"
        passes = [p for p in passes if not p.name.startswith(prefix)]
        contacts = pool.contacts
        if contacts is None or pool.batch is not None:
            return passes
        copies = []
        target = contacts.buffers["volumes"]
        for index, (slot, comp) in enumerate(contacts.volume_slots):
            source = getattr(comp, "source", None)
            if source is None:
                continue
            view = system.resources.get(f"{source}/{CENTRES}")
            size = 4 * VECTOR_FLOATS * math.prod(slot.grid)
            if not isinstance(view, BufferView) or view.size < size:
                continue   # the gas is gone or not made yet: the field samples zeros
            key = (view, target, slot.offset, size)
            known = contacts.gas.copies.get(index)
            if known is None or known[0] != key:
                known = (key, system.build.copy(
                    f"{prefix}{index}", Phase.SIMULATE, view, target, size,
                    destination_offset=4 * slot.offset,
                    does=f"{source}'s velocity at its cells' centres into the volume the "
                         f"update samples"))
                contacts.gas.copies[index] = known
            copies.append(known[1])
        return [*copies, *passes]
