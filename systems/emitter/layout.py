"""Where a simulation's emitters lie in its buffers, and how big those buffers are.

A simulation steps one emitter (alone) or many (a batch, batches.py) with the same passes over
the same layout. Each emitter owns a range of slots padded to whole 256-slot blocks
(emitter/types.wgsl BLOCK), a range of the alive list, and one record in each per-emitter
buffer (``RECORD`` bytes apart). The alpha emitters come last: their alive lists lie in
segments of one size past every slot, so that one segmented sort orders them all
(runtime/blocks/sort.py); an emitter alone sorts its alive list in place, one segment of its
capacity. The particles end at the last emitter's capacity (the shaders never touch a slot past
an emitter's capacity); the alive list of a batch covers whole blocks.

``plan`` lays out a simulation of ``members``; ``regions`` gives member k's part of each
buffer, which a batch publishes as the member's own ``<e>/<key>`` views.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import wgpu

from emberfx.blocks.sort import TILE
from emberfx.systems.emitter import features
from emberfx.systems.emitter import step as emitter_step
from emberfx.systems.emitter.events import INBOX
from emberfx.systems.emitter.feature import Record
from emberfx.systems.emitter.passes import DEPTH_PARAMS
from emberfx.systems.emitter.structs import BLOCK, BLOCK_WORDS, PARTICLE, RECORD
from emberfx.systems.forces.forces import FORCE, MAX_FORCES

if TYPE_CHECKING:
    from emberfx.systems.emitter.component import Emitter
    from emberfx.systems.emitter.host import EmitterHost

STORAGE = wgpu.BufferUsage.STORAGE
# the per-emitter records the host writes each step (records.py keeps them in pages)
RECORDS = ("params", "counters")
# a record's bytes the shaders use, where a record is RECORD bytes apart
USED = {"draw_args": 20, "alive_total": 16}


def padded(capacity: int) -> int:
    """An emitter's slots: its capacity rounded up to whole blocks."""
    return math.ceil(capacity / BLOCK) * BLOCK


@dataclass(frozen=True)
class Layout:
    """The places of a simulation's emitters and its buffers' sizes."""
    capacities: tuple[int, ...]
    bases: tuple[int, ...]         # each emitter's first slot
    alive_bases: tuple[int, ...]   # and first alive-list entry
    slots: int                     # slots of all, each emitter's padded
    blocks: int
    alpha: tuple[int, int]         # alpha emitters (last) and their sort segment (0: none)
    sizes: dict[str, tuple[int, int]]   # buffer key -> (bytes, usage)
    records: dict[str, Record]     # the features' records per emitter, by key

    @property
    def entries(self) -> int:
        """Alive-list entries: every slot, then the alpha emitters' segments."""
        return self.sizes["alive_list"][0] // 4

    def owners(self) -> tuple[np.ndarray, np.ndarray]:
        """The emitter of each block (``block_owner``), and of each 256 alive-list entries
        (``list_owner``, which the draws find their emitter by: emitter/billboard.wgsl)."""
        blocks = np.repeat(np.arange(len(self.bases), dtype=np.uint32),
                           [padded(c) // BLOCK for c in self.capacities])
        alphas, segment = self.alpha
        first = len(self.bases) - alphas
        if len(self.bases) == 1:   # (in place)
            return blocks, blocks
        listed = np.repeat(np.arange(first, len(self.bases), dtype=np.uint32), segment // BLOCK)
        return blocks, np.concatenate([blocks, listed]).astype(np.uint32)

    def record_fields(self, k: int) -> dict[str, int]:
        """Where emitter k's params record says its slots, alive list and forces are."""
        return {"first_block": self.bases[k] // BLOCK, "alive_base": self.alive_bases[k],
                "batch_blocks": self.blocks, "force_base": k * MAX_FORCES}

    def regions(self, k: int) -> dict[str, tuple[int, int]]:
        """Emitter k's (offset, size) in each buffer that has a part per emitter."""
        n, alive_base = self.capacities[k], self.alive_bases[k]
        out = {"particles": (self.bases[k] * PARTICLE.itemsize, n * PARTICLE.itemsize),
               "alive_list": (alive_base * 4, n * 4),
               "forces": (k * MAX_FORCES * FORCE.itemsize, MAX_FORCES * FORCE.itemsize),
               "event_links": (k * INBOX.itemsize, INBOX.itemsize),
               **{key: (k * r.stride, r.size) for key, r in self.records.items()},
               **{key: (k * RECORD, RECORD) for key in RECORDS},
               **{key: (k * RECORD, size) for key, size in USED.items()}}
        alphas, _ = self.alpha
        if alphas and k >= len(self.bases) - alphas:
            first = self.alive_bases[len(self.bases) - alphas]
            out["sort_keys"] = ((alive_base - first) * 4, n * 4)
        return out


def plan(system: EmitterHost, components: list[Emitter]) -> Layout:
    """The layout of a simulation of these emitters (alike but for capacity and blend: the
    first one's allocation and step decide for all), alpha ones last."""
    n = len(components)
    capacities = tuple(c.capacity for c in components)
    bases, slots = [], 0
    for capacity in capacities:
        bases.append(slots)
        slots += padded(capacity)
    blocks = slots // BLOCK
    end = bases[-1] + capacities[-1]
    alpha = [c.capacity for c in components if c.blend == "alpha"]
    if n == 1:   # an emitter alone sorts its alive list in place
        segment, alive_bases, listed = (capacities[0] if alpha else 0), [0], end
    else:
        segment = max(TILE, 1 << (max(alpha) - 1).bit_length()) if alpha else 0
        first = n - len(alpha)
        alive_bases = [bases[k] if k < first else slots + (k - first) * segment
                       for k in range(n)]
        listed = slots + len(alpha) * segment   # (whole blocks: the culling counts by block)
    sizes = {
        "particles": (end * PARTICLE.itemsize, STORAGE),
        "alive_list": (listed * 4, STORAGE),
        "block_alive": (blocks * 4, STORAGE),
        "block_owner": (blocks * 4, STORAGE),
        "list_owner": (max(blocks, math.ceil(listed / BLOCK)) * 4, STORAGE),
        **{key: (n * RECORD, STORAGE) for key in (*RECORDS, *USED)},
        "forces": (n * MAX_FORCES * FORCE.itemsize, STORAGE),
        "event_links": (n * INBOX.itemsize, STORAGE),   # inboxes, read where events reach
    }
    lead = components[0]
    records = {key: r for key, (_, r) in features.records(lead).items()}
    sizes.update({key: (n * r.stride, STORAGE) for key, r in records.items()})
    sizes["params"] = (n * RECORD, STORAGE | wgpu.BufferUsage.UNIFORM)
    sizes["draw_args"] = (n * RECORD, STORAGE | wgpu.BufferUsage.INDIRECT)
    if alpha:
        sizes["sort_keys"] = (len(alpha) * segment * 4, STORAGE)
        sizes["depth_params"] = (DEPTH_PARAMS.itemsize, STORAGE)
    if lead.allocation == "ordered":
        sizes["free_mask"] = (blocks * BLOCK_WORDS * 4, STORAGE)
        sizes["block_free"] = (blocks * 4, STORAGE)
        sizes.update(emitter_step.scratch_sizes(system, blocks, n, lead))
    else:
        sizes["alive_mask"] = (blocks * BLOCK_WORDS * 4, STORAGE)
    return Layout(capacities, tuple(bases), tuple(alive_bases), slots, blocks,
                  (len(alpha), segment), sizes, records)
