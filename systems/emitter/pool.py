"""One emitter entity's place in the emitter system: its component, its registry buffers, its
own passes (sprite sort and draw, or the mesh draw) and where it simulates (alone, ``sim``, or
as member ``member`` of ``batch``), with what the system caches of it between steps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from emberfx.systems.emitter import features
from emberfx.systems.emitter.params import Births
from emberfx.systems.emitter.step_upload import StepArrays
from emberfx.systems.emitter.structs import PARAMS

if TYPE_CHECKING:
    from emberfx.core.frame_graph import Pass
    from emberfx.core.resources import BufferView
    from emberfx.core.system import EntityRef, Readback
    from emberfx.systems.emitter.batches import Batch, Simulation
    from emberfx.systems.emitter.component import Emitter
    from emberfx.systems.emitter.contacts import Contacts
    from emberfx.systems.emitter.modifiers import Program


@dataclass
class Pool:
    """The GPU side of one emitter entity."""
    entity: EntityRef
    component: Emitter
    buffers: dict[str, BufferView]   # the registry's <entity>/<key> views, by key
    passes: list[Pass]
    readback: Readback | None = None   # the counters region the engine gathers back each step
    births: Births = field(default_factory=Births)
    param_record: np.ndarray = field(default_factory=lambda: np.zeros((), PARAMS))
    contacts: Contacts | None = None   # colliders and volumes its update binds
    # update passes built so far by variant (FORCE_KINDS, SOLID_KINDS, HAS_VECTOR_FIELDS), and
    # the one in use
    updates: dict[tuple[int, int, bool], Pass] = field(default_factory=dict)
    variant: tuple[int, int, bool] = (0, 0, False)
    program: Program | None = None   # its modifiers, attributes and expressions (modifiers.py)
    texture: object = None           # the sprite texture's view the draw binds
    layout: tuple = ()               # modifiers.layout_signature when the pool was made
    sim: Simulation | None = None   # what its simulation passes bind, when alone
    batch: Batch | None = None      # the batch it runs in, if any
    member: int = 0                          # and its index there
    dirty: bool = True   # the component was edited since its static fields were last packed
    # its forces, sprite look and inbox, as last packed while alone (step_upload.py)
    arrays: StepArrays = field(default_factory=lambda: StepArrays.of(1, {}))
    # what each of its features' records was last packed from, by key (step_upload.py)
    record_keys: dict[str, tuple] = field(default_factory=dict)
    # the features with something to write for it each step, as of its last edit or refresh
    # (features.upload); None: to be asked again before the next upload
    uploading: tuple | None = None

    def shader(self, base: str) -> str:
        """The shader pass ``base`` runs for this pool (specialised by its modifiers and its
        features)."""
        if self.program is not None and base in self.program.shaders:
            return self.program.shaders[base]
        return features.shader(self.component, base)
