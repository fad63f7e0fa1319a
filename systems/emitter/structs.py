"""The layouts and constants of the emitter's WGSL structs (shaders/emitter/types.wgsl), read
from the WGSL: the params record, the particle, the counters, the looks, and the slot blocks."""

from __future__ import annotations

from emberfx.core import wgsl
from emberfx.core.layout import struct_dtype

PARAMS = struct_dtype("emitter/types.wgsl", "EmitterParams")
RECORD = PARAMS.itemsize   # bytes of every per-emitter record (EmitterParams is padded to it)
PARTICLE = struct_dtype("emitter/types.wgsl", "Particle")
COUNTERS = struct_dtype("emitter/types.wgsl", "Counters")
LOOKS = struct_dtype("emitter/types.wgsl", "Looks")
LOOK_SAMPLES = wgsl.int_constant("emitter/types.wgsl", "LOOK_SAMPLES")
SHAPES = wgsl.enum_constants("emitter/types.wgsl", "SHAPE")
BLOCK = wgsl.int_constant("emitter/types.wgsl", "BLOCK")              # slots per mask block
BLOCK_WORDS = wgsl.int_constant("emitter/types.wgsl", "BLOCK_WORDS")  # u32 mask words per block
