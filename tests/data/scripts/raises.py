"""Raises on every update after the first few steps."""


def on_update(ctx, dt):
    if ctx.frame >= 3:
        raise RuntimeError("scripted failure")
    ctx.entity("jet").emitter.rate = 600.0 * (ctx.frame + 1)
