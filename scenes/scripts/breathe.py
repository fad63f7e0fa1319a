"""Lets the swarm breathe: its attraction strength swells and fades every 12 seconds."""
import math


def on_update(ctx, dt):
    ctx.self.particle_life.force = 1.0 + 0.6 * math.sin(2 * math.pi * ctx.time / 12.0)
