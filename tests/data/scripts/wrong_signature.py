def on_update(ctx):
    ctx.entity("jet").emitter.rate = 0.0
