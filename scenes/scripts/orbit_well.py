"""Moves the attractor 'well' round the stars on a slow ellipse while the cursor is outside the
window (and always headless); inside the window the well follows the cursor (follow_mouse)."""
import math


def on_update(ctx, dt):
    if ctx.input.inside:
        return
    t = ctx.time + dt
    x, y, z = ctx.entity("stars").emitter.position   # the ellipse is centred on the stars
    ctx.entity("well").attractor.position = (x + 0.9 * math.cos(0.5 * t), y + 0.3 * math.sin(t),
                                             z + 0.9 * math.sin(0.5 * t))
