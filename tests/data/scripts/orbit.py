"""Moves the attractor 'well' around a circle of radius 2 (one turn per second)."""
import math


def on_start(ctx):
    ctx.entity("well").attractor.position = (2.0, 0.0, 0.0)
    ctx.started = True


def on_update(ctx, dt):
    t = ctx.time + dt
    ctx.entity("well").attractor.position = (2.0 * math.cos(2 * math.pi * t),
                                             2.0 * math.sin(2 * math.pi * t), 0.0)
