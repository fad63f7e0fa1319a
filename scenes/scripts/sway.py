"""Sways the fountain's nozzle from side to side; the scene binds B to a "burst" event."""
import math


def on_update(ctx, dt):
    t = ctx.time
    ctx.self.emitter.position = (0.8 * math.sin(0.7 * t), -1.9, 0.0)
    ctx.self.emitter.direction = (0.25 * math.sin(1.3 * t), 1.0, 0.0)


def on_event(ctx, name, data):
    if name == "burst":
        ctx.burst("fountain", 3000)
