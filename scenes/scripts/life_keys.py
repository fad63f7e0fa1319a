"""The Life wall: P pauses it, C clears it (then paint cells with the mouse), via [bindings]."""
import numpy as np


def on_event(ctx, name, data):
    life = ctx.self.life
    if name == "life_pause":
        life.paused = not life.paused
    elif name == "life_clear":
        width, height = life.size
        every_cell = np.indices((width, height)).reshape(2, -1).T   # (x, y) rows
        ctx.paint(ctx.self.name, every_cell, alive=False)
