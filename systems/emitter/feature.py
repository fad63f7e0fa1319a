"""The emitter feature: what a feature may add to an emitter (emitter/features.py lists the
features and is what the system and the pass builders call).

A feature subclasses EmitterFeature and overrides what it adds; the defaults add nothing.
``arenas``, ``render_passes``, ``sort_inputs``, ``sort_passes`` and ``draw_inputs`` are asked
of a batch's simulation (an emitter alone sorts and draws its own buffers). ``slot_buffers``,
``program_batch_key``, ``program_bindings``, ``rebuilds_for`` and ``rebuilds`` follow the
emitter's compiled program (emitter/modifiers.py: its modifiers and the links into it), for
what the component alone cannot say. ``part_bindings``, ``part_constants`` and ``stand_ins``
are the emitter's own parts that its passes bind (its contacts, its event marks): a batch's
passes bind its first member's, or stand-ins where the members' would differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from emberfx.core.frame_graph import Pass
    from emberfx.core.resources import BufferView
    from emberfx.systems.emitter.batches import Simulation
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.layout import Layout
    from emberfx.systems.emitter.modifiers import Program
    from emberfx.systems.emitter.pool import Pool


@dataclass(frozen=True)
class Record:
    """A record a feature keeps per emitter: ``stride`` bytes apart in a simulation's buffer
    (layout.py lays them out for one emitter or many), the first ``size`` of them its own."""
    stride: int
    size: int


class EmitterFeature:
    """What a feature may add to an emitter; a feature overrides what it adds (the defaults
    add nothing)."""
    name = ""

    def applies(self, component) -> bool:
        """Whether the emitter uses the feature (the other methods are asked only then)."""
        return False

    def batch_key(self, component, resolve) -> tuple | None:
        """What it adds to the emitter's batch key; None: the emitter runs alone."""
        return ()

    def one_pass(self, component) -> bool:
        """Whether the one-pass step (emitter/update_ranked.wgsl) may step the emitter."""
        return True

    def buffers(self, component, resolve) -> dict[str, bytes]:
        """Its buffers by key (``<owner>/<key>``), with their contents."""
        return {}

    def records(self) -> dict[str, Record]:
        """Its records per emitter by key (``<e>/<key>``: a view into a batch's arena)."""
        return {}

    def record_key(self, component, key: str) -> tuple:
        """What record ``key`` is packed from: equal keys give the same bytes."""
        return ()

    def pack_record(self, component, key: str) -> bytes:
        """Record ``key`` of the emitter, packed after an edit that changed its record_key."""
        return b""

    def includes(self, base: str) -> dict[str, str]:
        """The includes it swaps in pass shader ``base`` (include -> replacement)."""
        return {}

    def constants(self, base: str, sim: Simulation) -> dict:
        """The pipeline constants it sets in pass shader ``base`` of simulation ``sim``."""
        return {}

    def bindings(self, base: str, buffers: dict) -> dict:
        """What pass shader ``base`` binds for it, from the simulation's buffers."""
        return {}

    def part_bindings(self, pool: Pool, base: str) -> dict:
        """What pass shader ``base`` binds for it from the emitter's own parts (``pool``: the
        simulation's first emitter)."""
        return {}

    def part_constants(self, pool: Pool, base: str) -> dict:
        """The pipeline constants pass shader ``base`` takes from the emitter ``pool`` itself."""
        return {}

    def stand_ins(self, pool: Pool) -> dict[str, BufferView]:
        """The buffers of ``part_bindings`` that a batch with ``pool`` as its first member binds
        stand-ins of the same size for (its members never read them: the batch key keeps
        apart the emitters that do), by binding."""
        return {}

    def slot_buffers(self, program: Program, capacity: int) -> dict[str, tuple[int, int]]:
        """The emitter's own buffers that its compiled ``program`` asks for, sized by its
        ``capacity``, by key, as (bytes, usage): made when it is added."""
        return {}

    def program_batch_key(self, program: Program) -> tuple | None:
        """What the emitter's compiled ``program`` adds to its batch key; None: the emitter
        runs alone."""
        return ()

    def program_bindings(self, program: Program, base: str, buffers: dict) -> dict:
        """What the generated code of ``program`` in pass shader ``base`` binds for it, from
        the pool's buffers (asked only of the passes the program derives)."""
        return {}

    def rebuilds_for(self, pool: Pool, program: Program) -> bool:
        """Whether giving the pool ``program`` in place of its own needs the emitter built
        again (a buffer of its comes or goes), not only recompiled in place."""
        return False

    def rebuilds(self, system: EmitterHost, pool: Pool) -> list[Pool]:
        """The other pools to build again now that ``pool`` was added (what they were made
        with depends on it)."""
        return []

    def stale(self, system: EmitterHost, pool: Pool) -> bool:
        """Whether what the pool was made with of another entity is gone or was made anew (the
        world changed): the system then builds the pool again."""
        return False

    def state(self, device, pool: Pool) -> dict[str, np.ndarray]:
        """What ``Engine.state(name)`` reads for it from the pool's buffers, by key."""
        return {}

    def problem(self, component, resolve) -> str | None:
        """Why the emitter's values cannot run, as "field.path: expected ..., found ...", or
        None."""
        return None

    def draw(self, system: EmitterHost, pool: Pool) -> list[Pass] | None:
        """The pool's draw passes in place of the sprite draw, or None (the sprites)."""
        return None

    def uploads(self, pool: Pool) -> bool:
        """Whether ``upload`` has something to write for the pool (asked after an edit and after
        the pool's update was brought up to date, not every step)."""
        return True

    def upload(self, system: EmitterHost, pool: Pool, acting: list) -> None:
        """What it writes for the pool each step, after the params record is packed
        (``acting``: the force components acting on it this step)."""
        return None

    def arenas(self, system: EmitterHost, members: list[Pool],
               layout: Layout) -> dict[str, tuple[int, int]]:
        """The buffers it adds to a batch of ``members`` laid out by ``layout``, by key, as
        (bytes, usage): made zeroed with the batch's other arenas (``<batch>/<key>``), before
        ``simulation``. It decides per batch (from the members, the layout's size, the
        system's tuning); {}: it adds none to this batch."""
        return {}

    def simulation(self, system: EmitterHost, pool: Pool, sim: Simulation) -> None:
        """What it makes once per simulation (``pool``: its first emitter), when the
        simulation is laid out: buffers sized by it (into ``sim.buffers``, by key) and its
        own state (``sim.parts[name]``)."""
        return None

    def step_passes(self, system: EmitterHost, pool: Pool, sim: Simulation,
                    passes: list[Pass]) -> list[Pass]:
        """``passes`` (the simulation's step, with whatever follows it) with its own passes
        in place: called whenever the step's passes are made or one of them is replaced, so it
        removes its passes of before first."""
        return passes

    def render_passes(self, system: EmitterHost, pool: Pool, sim: Simulation) -> list[Pass]:
        """Its RENDER-phase passes of simulation ``sim`` (``pool``: its first emitter), which
        run after the step and before the alpha emitters' back-to-front sort and the draws."""
        return []

    def sort_inputs(self, buffers: dict[str, BufferView]) -> dict[str, BufferView]:
        """What the alpha sort of the simulation whose buffers are ``buffers`` reads in place of
        them, by key (``sort_values``: the segments it orders; ``alive_total``: their counts);
        {}: the alive lists."""
        return {}

    def sort_passes(self, buffers: dict[str, BufferView], passes: list[Pass]) -> list[Pass]:
        """The alpha sort's ``passes`` as it changes them (what they declare they write)."""
        return passes

    def draw_inputs(self, buffers: dict[str, BufferView]) -> dict[str, BufferView]:
        """What the sprite draws of the simulation whose buffers are ``buffers`` bind in place of
        them, by key (``alive_list``: the entries drawn; ``draw_args``: the draws' indirect
        arguments); {}: its own."""
        return {}
