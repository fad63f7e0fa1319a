"""The Engine's fixed step on the GPU, and the layout it relies on kept in step with the world.

``simulate`` runs one step: each system's ``before_step`` (esper.process), the CLEAR, SIMULATE,
PREPARE and (where due) READBACK phases of the frame graph in one command encoder, submitted
now or held for the draw that follows inside ``engine.frame()`` (core/submission.py).
``lay_out`` and ``world_changed`` tell the systems, the readback (telemetry.py) and the frame
graph (renderer.py) that the world changed: all of it laid out again, or only one entity's
readback regions. ``counted_events`` hands scripts the events the GPU counted, from the newest
readback.
"""

from __future__ import annotations

import functools

from emberfx.core.frame_graph import SIMULATION_PHASES, Phase
from emberfx.core.resources import Resources
from emberfx.core.submission import HeldSubmission, bound_buffers
from emberfx.core.system import StepInfo
from emberfx.engine.renderer import OUTPUT_FORMAT, Renderer
from emberfx.engine.telemetry import Telemetry
from emberfx.engine.world import World


class Stepper:
    def __init__(self, device, resources: Resources, store: World, renderer: Renderer,
                 telemetry: Telemetry):
        self.device = device
        self.resources = resources
        self.store = store
        self.renderer = renderer
        self.telemetry = telemetry
        # phases -> (the names of their resources, those buffers' ids): a step with a readback
        # and one without have different phases, and the window alternates them
        self._held_buffers: dict[frozenset, tuple[frozenset, frozenset[int]]] = {}
        self._events_frame: int | None = None   # the readback whose GPU counts scripts heard

    # the world's layout ------------------------------------------------------------------------
    def lay_out(self) -> None:
        """A new readback layout for every system (the world was built or an entity rebuilt)."""
        # first the systems regroup and adapt: one that binds another entity's buffers binds the
        # remade ones
        self.store.arrange()
        self.store.world_changed()
        self.telemetry.lay_out(self.store.system_objects())
        self.renderer.invalidate_graphs()

    def world_changed(self, spawned: str | None = None, deleted: str | None = None) -> None:
        """After a spawn or delete: the systems adapt (e.g. to a new force), only that entity's
        readback regions change, and the graph is rebuilt lazily, at the next encode. When a
        system regrouped resources (``arrange``), the whole readback is laid out again."""
        if self.store.arrange(spawned or deleted):
            self.store.world_changed()
            self.telemetry.lay_out(self.store.system_objects())
            self.renderer.invalidate_graphs()
            return
        self.store.world_changed()
        regions = None
        if spawned is not None:
            ref = self.store.entities[spawned]
            regions = (spawned, [s.readbacks_of(ref) for s in self.store.systems_of(spawned)])
        self.telemetry.entity_changed(spawned=regions, deleted=deleted)
        self.renderer.invalidate_graphs()

    # one step ----------------------------------------------------------------------------------
    def simulate(self, info: StepInfo, *, readback_every: int, frame_open: bool) -> None:
        """Encode and submit step ``info``: its readback only every ``readback_every`` steps;
        ``frame_open``: inside ``engine.frame()``, where the encoder is held for the draw."""
        self.store.process(info)   # esper.process: each system's before_step, by priority
        if self.store.rearrange_due:   # e.g. an emitter left its batch (a live edit)
            self.lay_out()
        encoder = self.device.create_command_encoder(label=f"emberfx:step:{info.frame}")
        telemetry = self.telemetry
        # Each readback maps a buffer, and every map wakes wgpu-py's poll thread (about 1 ms of
        # GIL hand-over on a small CPU), so an interactive loop may read every few steps; the
        # gather copies (the READBACK phase) are then left out too.
        due = info.frame % readback_every == 0
        slot = telemetry.acquire_slot() if due else None
        phases = SIMULATION_PHASES if slot is not None else SIMULATION_PHASES - {Phase.READBACK}
        graph = self.renderer.graph(OUTPUT_FORMAT)
        # the draw that follows records into this encoder (and its last compute pass) and
        # submits both; the readback's copy goes last, after the draw's passes, and its map
        # after the submit
        held = frame_open and telemetry.profiler is None
        compute = graph.encode(encoder, {}, phases=phases, profiler=telemetry.profiler,
                               keep_compute=held)
        copy = telemetry.readback_copy(slot) if slot is not None else None
        if held:
            after = None
            if slot is not None:
                after = functools.partial(telemetry.submitted, slot, info.frame)
            self.resources.hold(HeldSubmission(self.device.queue, encoder,
                                               self._bound_buffers(graph, phases), compute,
                                               last=copy, after_submit=after))
        else:
            if copy is not None:
                copy(encoder)
            self.device.queue.submit([encoder.finish()])
            telemetry.submitted(slot, info.frame)

    def _bound_buffers(self, graph, phases) -> frozenset[int]:
        """The buffers the step's passes bind, worked out again only for other passes (new
        buffers come with new passes: their bind groups change)."""
        names = graph.resource_names(phases)
        known = self._held_buffers.get(phases)
        if known is None or known[0] is not names:
            known = self._held_buffers[phases] = (names, bound_buffers(names, self.resources))
        return known[1]

    def counted_events(self) -> list[tuple[str, dict]]:
        """Events the systems counted on the GPU since the last call (an emitter's
        "death:<name>"), from the newest readback: one or two steps late, never a stall."""
        frame, per_entity = self.telemetry.latest(heard=self._events_frame)
        if frame is None or frame == self._events_frame:
            return []
        self._events_frame = frame
        return [e for s in self.store.system_objects() for e in s.script_events(per_entity)]
