"""The update's marking of GPU events, as an emitter feature: every emitter's update pass binds
``<e>/event_marks`` (emitter/event_marks.wgsl), one word for an emitter that sends none, and the
bits of the kinds it sends (EVENT_KINDS) switch the marking on. What happens to the marks after
the update, the links between emitters, lives in emitter/events.py."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import wgpu

from emberfx.core import wgsl
from emberfx.core.resources import BufferView
from emberfx.systems.emitter.feature import EmitterFeature
from emberfx.systems.emitter.shader_names import UPDATE, UPDATE_RANKED
from emberfx.systems.emitter.structs import BLOCK, BLOCK_WORDS

if TYPE_CHECKING:
    from emberfx.systems.emitter.modifiers import Program
    from emberfx.systems.emitter.pool import Pool

KIND_INDEX = wgsl.enum_constants("emitter/event_types.wgsl", "EVENT")
"""each event kind's bit (death, collision, age: EVENT_KINDS of emitter/component.py)"""
MARKING = (UPDATE, UPDATE_RANKED)   # the passes that mark events


def kinds_sent(component) -> list[str]:
    return [kind for kind, _ in component.sub_emitters()]


def marks_size(component) -> int:
    """Bytes of a pool's event_marks: per kind sent, one count and BLOCK_WORDS mask words per
    block (emitter/event_marks.wgsl); one word for an emitter that sends none."""
    blocks = math.ceil(component.capacity / BLOCK)
    return max(4, len(kinds_sent(component)) * blocks * (1 + BLOCK_WORDS) * 4)


class EventMarksFeature(EmitterFeature):
    name = "event_marks"

    def applies(self, component) -> bool:
        return True   # the update binds the marks of every emitter, sending or not

    def slot_buffers(self, program: Program, capacity: int) -> dict[str, tuple[int, int]]:
        return {"event_marks": (marks_size(program.component), wgpu.BufferUsage.STORAGE)}

    def part_bindings(self, pool: Pool, base: str) -> dict:
        return {"event_marks": pool.buffers["event_marks"]} if base in MARKING else {}

    def part_constants(self, pool: Pool, base: str) -> dict:
        if base not in MARKING:
            return {}
        return {"EVENT_KINDS": sum(1 << KIND_INDEX[k] for k in kinds_sent(pool.component))}

    def stand_ins(self, pool: Pool) -> dict[str, BufferView]:
        return {"event_marks": pool.buffers["event_marks"]}
