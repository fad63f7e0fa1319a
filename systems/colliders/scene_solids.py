"""Every collider entity in the scene (sphere, box, plane, SDF) as the solids of one entity of
another family, packed as the records of shaders/common/collide.wgsl (systems/colliders/
particles.py packs them, as for emitters): a fluid's correction pass calls its
``collide_particle``, a gas marks the cells inside them solid. Four registry buffers of the
entity:

  <e>/collision     CollisionSet header: the collider count (the material does not act: a fluid
                    particle's velocity comes from its corrected move, a gas has no bounce)
  <e>/colliders     SolidCollider records, MAX_FORCES of them
  <e>/volume_refs   VolumeRef records of SDF colliders sampled from .npy files
  <e>/volumes       their samples, packed (systems/forces/volumes.py)

Records are rewritten when they change (colliders move live); the samples when the set of SDF
files changes, which remakes the volumes buffer when it must grow (``refresh`` says so: the
passes that bind it are then rebuilt). ``velocities`` gives each collider's velocity over the
last step, from its centre's move (a rotation moves no point here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import wgpu

from emberfx.core.errors import SceneError
from emberfx.core.resources import BufferView
from emberfx.core.system import EntityRef, snapshot
from emberfx.systems.colliders.particles import (
    COLLISION_SET,
    SOLID,
    VOLUME_REF,
    pack_collision_set,
    pack_solids,
    pack_volume_ref,
)
from emberfx.systems.forces.forces import MAX_FORCES
from emberfx.systems.forces.volumes import VolumeError, load_volume, pack_volumes


@dataclass(frozen=True)
class _Material:
    """The CollisionSet material: unused (no bounce)."""
    restitution: float = 0.0
    friction: float = 0.0
    lifetime_loss: float = 0.0
    kill: bool = False


class SceneSolids:
    def __init__(self, system, entity: EntityRef):
        self.system, self.entity = system, entity
        storage = wgpu.BufferUsage.STORAGE
        self.buffers: dict[str, BufferView] = {
            key: system.buffer(entity, key, size, storage) for key, size in (
                ("collision", COLLISION_SET.itemsize), ("colliders", MAX_FORCES * SOLID.itemsize),
                ("volume_refs", MAX_FORCES * VOLUME_REF.itemsize), ("volumes", 16))}
        self.header = np.zeros((), COLLISION_SET)
        self.volume_key: tuple = ()
        self.volume_index: dict[int, int] = {}
        self.volume_slots: list = []
        self.written: dict[str, tuple[BufferView, bytes]] = {}
        self.packed: tuple | None = None
        self.centres: dict[int, np.ndarray] = {}   # id(collider) -> its centre at the last step

    def bindings(self) -> dict[str, object]:
        b = self.buffers
        return {"collision": b["collision"], "colliders": b["colliders"],
                "volume_refs": b["volume_refs"], "volumes": b["volumes"],
                "scene_depth": "scene/depth"}

    def colliders(self) -> list:
        """Every collider component in the scene, the first MAX_FORCES in scene order."""
        return [c for _, c in self.system.query("collider")][:MAX_FORCES]

    def refresh(self) -> bool:
        """Upload the SDF files' samples when their set changed; True when the volumes buffer
        was remade larger."""
        sources = [(c, self._samples(ref, c)) for ref, c in self.system.query("collider")
                   [:MAX_FORCES] if c.shape == "sdf" and c.sdf is not None]
        key = tuple(id(samples) for _, samples in sources)
        if key == self.volume_key:
            return False
        flat, slots = pack_volumes([samples for _, samples in sources])
        self.system.gpu.check_buffer_size(flat.nbytes, f"entity '{self.entity.name}': the SDF "
                                                       f"colliders' samples")
        remade = flat.nbytes > self.buffers["volumes"].size
        if remade:
            self.buffers["volumes"] = self.system.resources.regrow(self.buffers["volumes"],
                                                                   flat.nbytes)
        self.system.resources.write(self.buffers["volumes"], flat)
        self.volume_key = key
        self.volume_index = {id(c): i for i, (c, _) in enumerate(sources)}
        self.volume_slots = [(slot, c) for slot, (c, _) in zip(slots, sources)]
        self.packed = None
        return remade

    def _samples(self, ref: EntityRef, collider) -> np.ndarray:
        shared = self.system.shared
        try:
            return load_volume(shared.resolve(collider.sdf) if shared.resolve else collider.sdf,
                               channels=1, limit=self.system.gpu.storage_limit)
        except VolumeError as exc:
            raise SceneError(shared.scene_path, str(exc), entity=ref.name,
                             field="collider.sdf") from None

    def write_step(self) -> None:
        """This step's records, each written only when it changed."""
        colliders = self.colliders()
        if self.volume_slots:
            refs = np.zeros(len(self.volume_slots), VOLUME_REF)
            for record, (slot, c) in zip(refs, self.volume_slots):
                pack_volume_ref(record, center=c.center, rotation_deg=c.rotation_deg,
                                size=c.size, grid=slot.grid, offset=slot.offset, tile=False)
            self._write("volume_refs", refs.tobytes())
        drawn_view = self.system.shared.drawn_view
        key = ([(id(c), snapshot(c)) for c in colliders], dict(self.volume_index))
        if self.packed is not None and self.packed[1] is drawn_view and self.packed[0] == key:
            return
        self._write("colliders", pack_solids(colliders, self.volume_index).tobytes())
        self._write("collision", pack_collision_set(self.header, _Material(), len(colliders),
                                                    drawn_view))
        self.packed = (key, drawn_view)

    def velocities(self, dt: float) -> np.ndarray:
        """(MAX_FORCES, 4) float32: xyz, each collider's velocity (in the colliders record's
        order) from its centre's move since the last call, dt seconds before; 0 for one new
        since then."""
        out = np.zeros((MAX_FORCES, 4), np.float32)
        centres = {}
        for k, c in enumerate(self.colliders()):
            now = np.asarray(c.center, np.float64)
            last = self.centres.get(id(c))
            if last is not None and dt > 0.0:
                out[k, :3] = (now - last) / dt
            centres[id(c)] = now
        self.centres = centres
        return out

    def _write(self, key: str, data: bytes) -> None:
        view = self.buffers[key]
        last = self.written.get(key)
        if last is None or last[0] is not view or last[1] != data:
            self.system.resources.write(view, data)
            self.written[key] = (view, data)
