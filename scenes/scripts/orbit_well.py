"""Moves the attractor 'well' around the stars on a slow ellipse."""
import math


def on_update(ctx, dt):
    t = ctx.time + dt
    ctx.entity("well").attractor.position = (1.6 * math.cos(0.5 * t), 0.4 * math.sin(t),
                                             1.6 * math.sin(0.5 * t))
