"""Bobs the flag's pole: the pinned edge rises and falls 15 cm every 8 seconds (animated pins)."""
import math


def on_update(ctx, dt):
    ctx.self.cloth.pin_offset = (0.0, 0.15 * math.sin(2 * math.pi * ctx.time / 8.0), 0.0)
