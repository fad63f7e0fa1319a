"""What an emitter's particles touch: the colliders acting on it (when it opts in with
``collision = {...}``) and the volumes its update samples (SDF colliders' and vector fields'
arrays). One ``Contacts`` per emitter entity owns four registry buffers the update pass binds:

  <e>/collision     CollisionSet: material, collider count, the last render's view (depth)
  <e>/colliders     SolidCollider records (common/collide.wgsl), MAX_FORCES of them
  <e>/volume_refs   VolumeRef records (common/volumes.wgsl): each volume's box, grid, offset
  <e>/volumes       every volume's samples, packed (systems/forces/volumes.py)

Records are rewritten each step (colliders move live); the samples only when the set of arrays
changes (a spawned field, ``Engine.set_field``). A larger set than the volumes buffer holds remakes
it in ``refresh``, which the system calls when the world changes (the passes are rebuilt then).
The ContactsFeature below binds them to the update passes and writes each step's records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import wgpu

from emberfx.core.errors import SceneError
from emberfx.core.resources import BufferView
from emberfx.core.system import EntityRef, snapshot
from emberfx.systems.colliders.particles import (
    COLLISION_SET,
    SOLID,
    SOLID_KINDS,
    VOLUME_REF,
    pack_collision_set,
    pack_solids,
    pack_volume_ref,
    solid_kind,
)
from emberfx.systems.emitter.feature import EmitterFeature
from emberfx.systems.emitter.gas_fields import GasSamples
from emberfx.systems.emitter.shader_names import UPDATE, UPDATE_RANKED
from emberfx.systems.forces.forces import MAX_FORCES
from emberfx.systems.forces.volumes import (
    VolumeError,
    load_volume,
    pack_volumes,
    packed_layout,
)

if TYPE_CHECKING:
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool

COLLIDER_KEYS = ("collider",)
INTEGRATING = (UPDATE, UPDATE_RANKED)   # the passes that move particles against what they touch


class Contacts:
    def __init__(self, system, entity: EntityRef):
        self.system = system
        self.entity = entity
        storage = wgpu.BufferUsage.STORAGE
        self.buffers: dict[str, BufferView] = {
            key: system.buffer(entity, key, size, storage) for key, size in (
                ("collision", COLLISION_SET.itemsize),
                ("colliders", MAX_FORCES * SOLID.itemsize),
                ("volume_refs", 2 * MAX_FORCES * VOLUME_REF.itemsize),
                ("volumes", 16))}
        self.header = np.zeros((), COLLISION_SET)
        self.volume_key: tuple = ()      # the arrays whose samples the volumes buffer holds
        self.volume_index: dict[int, int] = {}   # id(component) -> its VolumeRef index
        self.volume_slots: list = []
        self.volume_arrays: list[np.ndarray] = []
        self.written: dict[str, tuple[BufferView, bytes]] = {}   # key -> what was last written
        self.packed: tuple | None = None   # what the colliders and header were last packed from
        self.gas = GasSamples(system)   # gas-sourced fields' stand-ins and copies (gas_fields.py)

    def bindings(self) -> dict[str, object]:
        b = self.buffers
        return {"collision": b["collision"], "colliders": b["colliders"],
                "volume_refs": b["volume_refs"], "volumes": b["volumes"],
                "scene_depth": "scene/depth"}

    # what acts on the emitter -----------------------------------------------------------------
    def colliders(self, component) -> list:
        """The collider components acting on the emitter (none without a collision material),
        the first MAX_FORCES in scene order."""
        if component.collision is None:
            return []
        wanted = component.affected_by
        return [c for ref, c in self.system.query(*COLLIDER_KEYS)
                if wanted is None or ref.name in wanted][:MAX_FORCES]

    def solid_kinds(self, component) -> int:
        """Bit k set for each SOLID_* kind among the colliders acting on the emitter (0: no
        collisions): the update compiles in only those."""
        mask = 0
        for c in self.colliders(component):
            mask |= 1 << SOLID_KINDS[solid_kind(c)]
        return mask

    def volume_sources(self, component, forces: list) -> list[tuple[object, np.ndarray]]:
        """(component, samples) for every volume the emitter samples: SDF colliders read from
        files, then vector fields, in scene order (a gas-sourced field's: zeros of the gas's
        grid, which a copy of the gas's velocity overwrites each step)."""
        out = []
        for c in self.colliders(component):
            if c.shape == "sdf" and c.sdf is not None:
                out.append((c, self._sdf_samples(c)))
        arrays = self.system.vector_fields.samples   # as the force_field system announced
        names = {id(comp): ref.name for ref, comp in self.system.query("force_field")}
        for f in forces:
            if getattr(f, "kind", None) == "vector_field":
                samples = (self.gas.samples(f.source) if f.source is not None
                           else arrays.get(names.get(id(f), "")))
                if samples is not None:
                    out.append((f, samples))
        return out

    def _sdf_samples(self, collider) -> np.ndarray:
        shared = self.system.shared
        name = next((ref.name for ref, c in self.system.query(*COLLIDER_KEYS) if c is collider),
                    "?")
        try:
            return load_volume(shared.resolve(collider.sdf) if shared.resolve else collider.sdf,
                               channels=1, limit=self.system.gpu.storage_limit)
        except VolumeError as exc:
            raise SceneError(shared.scene_path, str(exc), entity=name,
                             field="collider.sdf") from None

    # upkeep -----------------------------------------------------------------------------------
    def refresh(self, component, forces: list) -> bool:
        """Upload the volumes' samples if the set of arrays changed; True when the volumes
        buffer had to be remade larger (the update pass must bind the new one)."""
        sources = self.volume_sources(component, forces)
        key = tuple(id(samples) for _, samples in sources)
        if key == self.volume_key:
            return False
        floats, _ = packed_layout([samples.shape for _, samples in sources])
        self.system.gpu.check_buffer_size(   # before packing: SDF bricks take 8x their samples
            4 * floats, f"entity '{self.entity.name}': the volumes its emitter samples "
                        f"(SDF colliders and vector fields, {len(sources)} arrays)")
        flat, slots = pack_volumes([samples for _, samples in sources])
        remade = flat.nbytes > self.buffers["volumes"].size
        if remade:
            self.buffers["volumes"] = self.system.resources.regrow(self.buffers["volumes"],
                                                                   flat.nbytes)
        self.system.resources.write(self.buffers["volumes"], flat)
        self.volume_key = key
        self.volume_arrays = [samples for _, samples in sources]   # their ids stay unique
        self.volume_index = {id(comp): i for i, (comp, _) in enumerate(sources)}
        self.volume_slots = [(slot, comp) for slot, (comp, _) in zip(slots, sources)]
        return remade

    def write_step(self, component, forces: list) -> None:
        """This step's records: colliders where they are now, the volume boxes, the header;
        each written only when it differs from what the buffer holds (only the host writes
        them), so still colliders cost no upload."""
        colliders = self.colliders(component)
        if self.volume_slots:
            refs = np.zeros(len(self.volume_slots), VOLUME_REF)
            for record, (slot, comp) in zip(refs, self.volume_slots):   # boxes move live
                center, size, rotation = (
                    self.gas.box(comp) if getattr(comp, "source", None) is not None else
                    (comp.center, getattr(comp, "box_size", comp.size), comp.rotation_deg))
                pack_volume_ref(record, center=center, rotation_deg=rotation, size=size,
                                grid=slot.grid, offset=slot.offset,
                                tile=getattr(comp, "tile", False))
            self._write("volume_refs", refs.tobytes())
        if component.collision is None:
            return
        # packing costs more than comparing what it is packed from: the colliders' values, the
        # material, the volumes' indices and the last render's view (a new object only when
        # the camera or the size changed: the renderer keeps it)
        drawn_view = self.system.shared.drawn_view
        key = ([(id(c), snapshot(c)) for c in colliders], snapshot(component.collision),
               self.volume_index)
        if self.packed is not None and self.packed[1] is drawn_view and self.packed[0] == key:
            return
        self._write("colliders", pack_solids(colliders, self.volume_index).tobytes())
        self._write("collision", pack_collision_set(
            self.header, component.collision, len(colliders), drawn_view))
        self.packed = (key, drawn_view)

    def _write(self, key: str, data: bytes) -> None:
        view = self.buffers[key]
        last = self.written.get(key)
        if last is None or last[0] is not view or last[1] != data:   # (a regrown buffer: new)
            self.system.resources.write(view, data)
            self.written[key] = (view, data)


class ContactsFeature(EmitterFeature):
    """Every emitter's update binds its contacts (empty sets where nothing acts on it)."""
    name = "contacts"

    def applies(self, component) -> bool:
        return True

    def part_bindings(self, pool: Pool, base: str) -> dict:
        assert pool.contacts is not None
        return pool.contacts.bindings() if base in INTEGRATING else {}

    def stand_ins(self, pool: Pool) -> dict[str, BufferView]:
        assert pool.contacts is not None
        return dict(pool.contacts.buffers)

    def uploads(self, pool: Pool) -> bool:
        """Only an emitter that collides or samples volumes has contact records to write."""
        assert pool.contacts is not None
        return bool(pool.contacts.volume_slots) or pool.component.collision is not None

    def upload(self, system: EmitterHost, pool: Pool, acting: list) -> None:
        assert pool.contacts is not None
        pool.contacts.write_step(pool.component, acting)
