"""Moves the attractor 'well' around the stars on a slow ellipse while the cursor is outside the
window (and always headless); inside the window the well follows the cursor (follow_mouse)."""
import math


def on_update(ctx, dt):
    if ctx.input.inside:
        return
    t = ctx.time + dt
    ctx.entity("well").attractor.position = (1.6 * math.cos(0.5 * t), 0.4 * math.sin(t),
                                             1.6 * math.sin(0.5 * t))
