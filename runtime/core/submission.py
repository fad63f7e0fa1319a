"""A step's command encoder held open for the draw that follows it: one submission a frame.

Making, finishing and submitting a command encoder costs the host CPU time of its own, beyond
its commands', and a frame that submits its step and its draw separately pays it twice. Inside
``Engine.frame()`` the step leaves its encoder open (held here) and the draw records into it:
one encoder, one finish and one submit a frame.

Holding changes when the step's commands reach the queue, never what they compute. A
``queue.write_buffer`` lands before the submission that follows it, so a write made while the
step is held would be seen by the step's passes, or overwritten by them. So whatever could
reorder work submits the held encoder first:

- a write to a buffer that the held passes bind (``Resources.write`` checks, the frame
  uniform's writer too);
- releasing any resource (the held passes might bind it), and new render targets;
- an edit applied between the step and the draw;
- any Engine call other than ``draw_to`` (engine_guard.py): reads, edits, another step.

The draw is the only thing that takes the encoder over (``Resources.take_held``), with the
step's last compute pass still open when the step ended with compute work: the draw's first
compute work continues it, which saves the host one pass a frame. WebGPU orders the dispatches
of one pass as it orders those of consecutive passes, so the results are the same. A step that
reads back leaves its copy into the readback ring for the end of the encoder (a copy would end
the open pass; the draw's passes do not write what it copies) and the ring slot's map for after
the submission.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import wgpu


@dataclass(frozen=True)
class HeldSubmission:
    """An encoder with a step's passes recorded in it, not yet finished; ``buffers``: the ids
    of the GPU buffers those passes bind. ``compute``: the step's last compute pass, left open
    when the step ended with compute work, so that the draw's first compute work records into
    it (beginning a pass costs the host about as much as recording several dispatches).
    ``last``: commands the step leaves for the end of the encoder, after the draw's passes (its
    readback copy: recorded at once, it would end the compute pass the draw continues);
    ``after_submit``: what must follow the submission (the copy's map). Whoever submits the
    encoder calls ``record_last()`` before finishing it and ``submitted()`` right after."""
    queue: wgpu.GPUQueue
    encoder: wgpu.GPUCommandEncoder
    buffers: frozenset[int]
    compute: wgpu.GPUComputePassEncoder | None = None
    last: Callable[[wgpu.GPUCommandEncoder], None] | None = None
    after_submit: Callable[[], None] | None = None

    def submit(self) -> None:
        if self.compute is not None:
            self.compute.end()
        self.record_last()
        self.queue.submit([self.encoder.finish()])
        self.submitted()

    def record_last(self) -> None:
        if self.last is not None:
            self.last(self.encoder)

    def submitted(self) -> None:
        if self.after_submit is not None:
            self.after_submit()


def bound_buffers(names: Iterable[str], resources) -> frozenset[int]:
    """The ids of the buffers behind the resource ``names`` (views of one arena share theirs)."""
    found = set()
    for name in names:
        item = resources.get(name)
        buffer = getattr(item, "buffer", None)
        if buffer is not None:
            found.add(id(buffer))
    return frozenset(found)
