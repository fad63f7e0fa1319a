"""Spawns an attractor on the first step, bursts the emitter, deletes the attractor at frame 5."""


def on_start(ctx):
    ctx.spawn("late", attractor={"position": [0.0, 1.0, 0.0], "strength": 2.0})
    ctx.burst("jet", 250)
    ctx.emit("ping", ctx.rng.integers(0, 1000))


def on_update(ctx, dt):
    if ctx.frame == 5:
        ctx.delete("late")


def on_event(ctx, name, data):
    ctx.self.emitter.size = 0.05 if name == "ping" else 0.01
