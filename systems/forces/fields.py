"""Vector fields' samples: the system of the ``force_field`` component keeps, for each
``kind = "vector_field"`` entity, its checked float32 (D, H, W, 3) array: read from its ``field``
file, or set from Python (``Engine.set_field``, ``ctx.set_field``). Other kinds of force field
need nothing here (they are packed from their fields each step), nor do vector fields whose
``source`` is a gas (the emitters copy the gas's velocity on the GPU: emitter/gas_fields.py).

It owns no GPU resources: whenever a vector field's samples come, change or go, it announces
every field's samples (``VECTOR_FIELDS``, a ``VectorFields`` with a new ``version``) on the
Engine's notices (core/events.py); each emitter keeps the last announcement, packs the volumes
acting on it into its own buffer (systems/emitter/contacts.py) and repacks when the version
changes.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from emberfx.core.errors import EmberError, SceneError
from emberfx.core.system import EntityRef, Priority, System
from emberfx.model.registry import script_action, set_system
from emberfx.systems.forces import forces  # noqa: F401  (registers force_field first)
from emberfx.systems.forces.volumes import VolumeError, check_volume, load_volume

VECTOR_FIELDS = "vector_fields"   # the notice: fn(fields: VectorFields)

_versions = itertools.count(1)   # across Engines and worlds: no two announcements share one


@dataclass(frozen=True)
class VectorFields:
    """What the force_field system announces (``VECTOR_FIELDS``): every vector field's
    samples by entity name, and a version that no other announcement in the process has."""

    samples: Mapping[str, np.ndarray]
    version: int


NO_VECTOR_FIELDS = VectorFields(MappingProxyType({}), 0)   # before any announcement


class FieldSystem(System):
    key = "force_field"
    priority = Priority.FORCES

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.arrays: dict[str, np.ndarray] = {}   # vector field entity -> its samples

    def _announce(self) -> None:
        """Tell the families that sample vector fields (the emitters) of the samples now."""
        fields = VectorFields(MappingProxyType(dict(self.arrays)), next(_versions))
        self.shared.events.announce(VECTOR_FIELDS, fields)

    def add(self, entity: EntityRef, component) -> None:
        if component.kind != "vector_field" or component.field is None:
            return
        resolve = self.shared.resolve
        path = resolve(component.field) if resolve is not None else component.field
        try:
            array = load_volume(path, channels=3, limit=self.gpu.storage_limit)
        except VolumeError as exc:
            raise SceneError(self.shared.scene_path, str(exc), entity=entity.name,
                             field="force_field.field") from None
        self.gpu.check_buffer_size(array.nbytes, f"entity '{entity.name}': force_field.field "
                                   f"{tuple(array.shape)} float32")
        self.arrays[entity.name] = array
        self._announce()

    def remove(self, entity: EntityRef) -> None:
        if self.arrays.pop(entity.name, None) is not None:
            self._announce()

    def set_field(self, entity: EntityRef, array: np.ndarray) -> None:
        self.arrays[entity.name] = array
        self._announce()


set_system("force_field", FieldSystem)


@script_action("set_field")
def set_field(engine, name: str, array) -> None:
    """Replace vector field ``name``'s samples: a float32 (D, H, W, 3) array of vectors in the
    field box's local frame (any grid size; the box stays). Emitters sample it from the next
    step on."""
    call = f"set_field({name!r}, ...)"
    components = engine.components_of(name)
    field = components.get("force_field")
    if field is None or field.kind != "vector_field":
        found = (f"kind = \"{field.kind}\"" if field is not None else
                 f"an entity with {', '.join(components) or 'no components'}")
        raise EmberError(f"{call}: expected a force_field entity of kind \"vector_field\", "
                         f"found {found}")
    if field.source is not None:
        raise EmberError(f"{call}: expected a vector field of samples, found one sampling the "
                         f"velocity of gas '{field.source}' (source = '{field.source}')")
    if isinstance(array, numbers.Number):
        raise EmberError(f"{call}: expected a float32 (D, H, W, 3) numpy array, found a number")
    try:
        checked = check_volume(np.asarray(array) if isinstance(array, (list, tuple)) else array,
                               channels=3)
    except VolumeError as exc:
        raise EmberError(f"{call}: {exc}") from None
    engine.gpu.check_buffer_size(checked.nbytes, f"{call}: {tuple(checked.shape)} float32")
    engine.system_of(name, "force_field").set_field(engine.entity_ref(name), checked.copy())
    engine.passes_changed()   # emitters upload the samples, in a larger buffer if need be
