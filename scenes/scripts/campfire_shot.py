"""The showcase's shot. The camera dollies slowly round the fire and in, over the whole clip,
until the user moves it with the mouse (then it stays where they put it). The fireflies' lure
drifts along a slow figure of eight over the clearing while the cursor is outside the window
(always headless and on the web); inside the window it follows the cursor (follow_mouse)."""
import math

DOLLY_SECONDS = 10.0
shot: dict = {"placed": None}   # the camera position this script set last


def camera_at(t):
    """The dolly: a quarter of the way round a slow arc, closing in as it goes."""
    u = min(t / DOLLY_SECONDS, 1.0)
    eased = u * u * (3.0 - 2.0 * u)
    angle = math.radians(-12.0 + 14.0 * eased)
    distance = 2.8 - 0.35 * eased
    position = (0.3 + distance * math.sin(angle), 1.3 - 0.2 * eased,
                distance * math.cos(angle))
    target = (0.3 + 0.1 * eased, 0.45, 0.0)
    return position, target


def on_update(ctx, dt):
    t = ctx.time + dt
    camera = ctx.camera
    if shot["placed"] is None or tuple(camera.position) == shot["placed"]:
        position, target = camera_at(t)
        camera.position = position
        camera.target = target
        shot["placed"] = tuple(camera.position)
    if not ctx.input.inside:
        ctx.entity("lure").attractor.position = (
            -0.3 + 1.4 * math.sin(0.31 * t), 1.25 + 0.25 * math.sin(0.83 * t),
            -0.7 + 0.5 * math.sin(0.62 * t))
