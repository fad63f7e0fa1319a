"""Labels: text set into a texture and drawn as an additive world quad, checked against the
camera's analytic projection of the quad and against the colour and backdrop it is added to."""

from __future__ import annotations

import numpy as np
import pytest
import srgb_model as srgb

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.camera import Camera
from emberfx.model.scene import EntitySpec, Scene, SceneSettings, loads_scene
from emberfx.systems.label.component import Label
from emberfx.systems.life.component import Life

SIZE = (160, 80)           # pixels
HEIGHT = 2.0               # the orthographic camera's height: 40 pixels per world unit


def label_engine(*extra: EntitySpec, **fields) -> Engine:
    scene = Scene(SceneSettings(seed=1, background="#000000"),
                  Camera(kind="orthographic", height=HEIGHT),
                  [EntitySpec("caption", {"label": Label(**fields)}), *extra])
    return Engine(scene, size=SIZE)


def lit_box(image: np.ndarray, threshold: int = 40) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) of the pixels brighter than ``threshold``, inclusive."""
    ys, xs = np.nonzero(image[..., :3].max(axis=2) > threshold)
    return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())


def test_text_lies_in_its_line_box_and_moves_with_position(gpu):
    engine = label_engine(text="Hello B3/S23", position=(0.0, 0.0, 0.0), height=0.5)
    ppu = SIZE[1] / HEIGHT
    x0, y0, x1, y1 = lit_box(engine.render())
    # the line is 0.5 tall = 20 px about the centre row 40: the letters stay inside it
    assert 40 - 10 <= y0 and y1 <= 40 + 10 and y1 - y0 >= 10, (y0, y1)
    # and centred across: left and right margins equal within 2 px (the texture's padding)
    assert abs(x0 - (SIZE[0] - 1 - x1)) <= 2, (x0, x1)
    engine.entity("caption").label.position = (0.5, -0.25, 0.0)
    moved = lit_box(engine.render())
    assert moved == (x0 + round(0.5 * ppu), y0 + round(0.25 * ppu),
                     x1 + round(0.5 * ppu), y1 + round(0.25 * ppu))
    engine.close()


def test_letters_take_the_colour_and_add_to_the_backdrop(gpu):
    backdrop = Life(size=(4, 4), alive_color="#303030", dead_color="#303030")
    engine = label_engine(EntitySpec("back", {"life": backdrop}), text="MMMM", height=1.0,
                          color="#ff8000")
    image = engine.render()[..., :3].astype(int)
    back = int(image[0, 0, 0])   # the corner lies outside the label's quad: the backdrop alone
    assert abs(back - 0x30) <= 2   # (the Life image holds linear colour in 8 bits)
    # the rows above the line, inside the quad's padding, and the gaps: the backdrop unchanged
    assert (image[:20] == back).all()
    # a letter's solid stroke: the label's linear colour plus the backdrop's, sRGB-encoded
    expected = srgb.encode(srgb.decode([back] * 3) + srgb.decode([0xff, 0x80, 0x00]))
    brightest = image.reshape(-1, 3)[np.argmax(image.reshape(-1, 3)[:, 1])]
    assert np.abs(brightest - expected).max() <= 2, (brightest, expected)
    engine.close()


@pytest.mark.parametrize("text,pieces", [
    ('text = ""', ["label.text", "length >= 1"]),
    ('text = "two\\nlines"', ["label.text", "one line"]),
    ('text = "   "', ["label.text", "visible character"]),
    ('text = "x"\ncolor = "gold"', ["label.color", "found 'gold'"]),
    ('text = "x"\nheight = 0.0', ["label.height", "> 0.0"]),
])
def test_bad_label_fields_are_one_line_errors(text, pieces):
    with pytest.raises(SceneError) as info:
        loads_scene(f'[[entity]]\nname = "caption"\n[entity.label]\n{text}\n', path="l.toml")
    message = str(info.value)
    assert "\n" not in message and "entity 'caption'" in message
    for piece in pieces:
        assert piece in message, (piece, message)
