"""Turns the knot and the orb: each frame sets the mesh shapes' rotation, so their skins (and
the sparks they shed) follow the meshes round."""


def on_update(ctx, dt):
    t = ctx.time
    for name, speed in (("knot", 40.0), ("orb", -25.0), ("core", -25.0)):
        shape = ctx.entity(name).emitter.shape
        shape.rotation_deg = (12.0 * t, speed * t, 8.0 * t)
