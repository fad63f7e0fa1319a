"""Culling a batch's sprites before the draw (systems/emitter/culling.py): the draws launch only
sprites that cover a pixel centre, and the image stays the same.

Oracles: the same scene drawn without culling (every byte of the HDR image, through the three
blends, a back-to-front alpha sort, rotation, velocity stretch, pixel and world sizes and a
ragged target size); and numpy, which projects each alive particle's centre with the frame's own
view_proj and predicts, for unrotated pixel-sized sprites, which ones hold a pixel centre: every
sprite whose square holds one is drawn, none whose square grown by the cull's margin holds none
is, and each emitter's drawn list keeps its alive list's order."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from emberfx.core.readback import read_array
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.systems.emitter.tuning import DEFAULT

SIZE = (173, 97)   # odd sizes: no pixel grid lines up with the centre of the view
MARGIN = 1.0 / 32.0 + 1.0 / 1024.0 + 4e-3   # emitter/cull.wgsl: SNAP_MARGIN + RELATIVE_MARGIN x 173

HEADER = """
[scene]
name = "culling"
seed = 5
size = [173, 97]
[camera]
kind = "perspective"
position = [0.0, 1.0, 9.0]
target = [0.0, 0.0, 0.0]
"""


def emitter(name: str, capacity: int, blend: str, x: float, extra: str = "") -> str:
    return f"""
[[entity]]
name = "{name}"
[entity.emitter]
capacity = {capacity}
rate = {capacity * 2}
lifetime = [0.3, 1.0]
speed = [0.5, 3.0]
position = [{x}, 0.0, 0.0]
blend = "{blend}"
{extra}
"""


# world-sized sprites from sub-pixel to a few pixels, one emitter partly off the left edge
MIXED = (HEADER
         + emitter("tiny", 900, "additive", -2.0, "size = 0.004")
         + emitter("spun", 257, "alpha", -1.0,
                   "size = 0.25\nrotation_deg = [0.0, 90.0]\nangular_velocity_deg = [-90.0, 90.0]")
         + emitter("solid", 300, "opaque", 0.0, "size = 0.01")
         + emitter("streak", 700, "alpha", 1.0,
                   'size = 0.005\nalign = "velocity"\nstretch = 0.02')
         + emitter("edge", 1000, "additive", -6.2, "size = 0.02")
         + emitter("dots", 255, "additive", 2.0, 'size = 0.6\nsize_unit = "pixels"'))


def run(text: str, cull: bool, steps: int = 12):
    """The HDR image, the batch's arenas' contents and the pass names, culled or not."""
    tuning = replace(DEFAULT, cull_from=0 if cull else None)
    with Engine(loads_scene(text, path="<culling>"), size=SIZE, emitter_tuning=tuning) as engine:
        engine.step(steps)
        image = engine.render_hdr()
        names = [p.name for p in engine.frame_passes()]
        system = engine.system_of(engine.entity_names()[0], "emitter")
        read: dict = {}
        if system.batches:
            batch = system.batches[0]
            b = batch.sim.buffers
            n = len(batch.members)
            for key in ("draw_args", "drawn_args") if cull else ("draw_args",):
                read[key] = read_array(engine.device, b[key], np.uint32).reshape(n, -1)[:, :5]
            for key in ("alive_list", "drawn_list") if cull else ("alive_list",):
                read[key] = read_array(engine.device, b[key], np.uint32)
            read["particles"] = read_array(engine.device, b["particles"], np.float32).reshape(-1, 8)
            read["first_blocks"] = [int(p.param_record["first_block"]) for p in batch.members]
            read["alphas"] = batch.layout.alpha[0]
            view_proj, size = system.shared.drawn_view   # what the frame uniform holds
            read["view_proj"], read["viewport"] = np.asarray(view_proj, np.float64), size
        return image, read, names


def kept_in_order(read, forward=None) -> list[np.ndarray]:
    """Each emitter's drawn entries, checked: alive slots, each once; an opaque or additive
    emitter's in its alive list's order; an alpha one's (the batch's last ``alphas``) back to
    front along the camera's ``forward`` (numpy depths of the read particles; equal keys in
    slot order, as the sort's (key, value) order has it)."""
    drawn_per_emitter = []
    emitters = len(read["draw_args"])
    for k, ((indices, alive, *zeros, base), (indices2, kept, *zeros2, base2)) in enumerate(
            zip(read["draw_args"], read["drawn_args"], strict=True)):
        # drawIndexedIndirect's arguments, from the same first instance
        assert (indices, indices2, zeros, zeros2, base) == (6, 6, [0, 0], [0, 0], base2)
        assert kept <= alive
        entries = read["alive_list"][base:base + alive]
        drawn = read["drawn_list"][base:base + kept]
        where = {slot: k for k, slot in enumerate(entries.tolist())}
        order = [where[slot] for slot in drawn.tolist()]   # KeyError: a slot not alive
        assert len(set(order)) == len(order)
        if k < emitters - read["alphas"]:
            assert order == sorted(order), "the drawn list must keep the alive list's order"
        elif forward is not None and kept > 1:
            first = read["first_blocks"][k] * 256
            centres = read["particles"][first + drawn.astype(np.int64), :3].astype(np.float64)
            depth = centres @ np.asarray(forward, np.float64)
            assert (np.diff(depth) <= 1e-5).all(), "an alpha emitter's drawn list back to front"
        drawn_per_emitter.append(drawn)
    return drawn_per_emitter


ORTHOGRAPHIC = """
[camera]
kind = "orthographic"
center = [0.5, 0.3]
height = 9.0
"""


@pytest.mark.parametrize("camera", ["perspective", "orthographic"])
def test_culled_draws_give_the_same_image_and_launch_fewer_sprites(gpu, camera):
    text = MIXED if camera == "perspective" else MIXED.replace(
        HEADER, HEADER.split("[camera]")[0] + ORTHOGRAPHIC)
    image, read, names = run(text, cull=False, steps=30)
    culled_image, culled, culled_names = run(text, cull=True, steps=30)
    assert {n.split(":", 1)[1] for n in culled_names if n.startswith("~batch")} >= {
        "emitter:cull", "emitter:drawn:scan:tiles0", "emitter:cull_compact"}
    assert not any(":cull" in n for n in names)
    assert np.array_equal(image, culled_image)
    assert float(image[..., :3].max()) > 0.0              # something was drawn
    forward = np.array([0.0, -1.0, -9.0]) if camera == "perspective" else np.array([0, 0, -1.0])
    drawn = kept_in_order(culled, forward / np.linalg.norm(forward))
    assert culled["alphas"] == 2
    alive = int(culled["draw_args"][:, 1].sum())
    kept = sum(len(d) for d in drawn)
    print(f"alive {alive}, drawn {kept}: {culled['drawn_args'][:, 1].tolist()}")
    assert alive > 2000                                    # busy pools
    assert 0 < kept < 0.7 * alive                          # the cull did drop sprites
    # the large pixel-sized dots (0.6 px) and the rotated 0.03-unit sprites keep most of theirs,
    # the off-screen part of "edge" is gone
    assert np.array_equal(read["draw_args"][:, 1], culled["draw_args"][:, 1])


def window_centres(read, emitter: int) -> tuple[np.ndarray, np.ndarray]:
    """numpy: the slots of the batch's ``emitter`` alive and each one's window position."""
    _, alive, _, _, base = read["draw_args"][emitter]
    slots = read["alive_list"][base:base + alive]
    first = read["first_blocks"][emitter] * 256
    centres = read["particles"][first + slots.astype(np.int64), :3].astype(np.float64)
    clip = np.c_[centres, np.ones(len(centres))] @ read["view_proj"].T
    ndc = clip[:, :2] / clip[:, 3:4]
    viewport = np.asarray(read["viewport"], np.float64)
    window = np.c_[(ndc[:, 0] + 1.0) * 0.5, (1.0 - ndc[:, 1]) * 0.5] * viewport
    assert (clip[:, 3] > 0).all()
    return slots, window


def holds_centre(low: np.ndarray, high: np.ndarray, extent: float) -> np.ndarray:
    first = np.maximum(np.ceil(low - 0.5), 0.0)
    last = np.minimum(np.floor(high - 0.5), extent - 1.0)
    return first <= last


def test_drawn_sprites_match_a_numpy_projection_of_pixel_sized_squares(gpu):
    # unrotated squares of 0.2, 0.7 and 1.5 pixels: a sprite's window box is its centre +- half
    text = HEADER + "".join(
        emitter(f"px{k}", capacity, "additive", x, f'size = {edge}\nsize_unit = "pixels"')
        for k, (capacity, x, edge) in enumerate([(1500, -3.0, 0.2), (600, 0.0, 0.7),
                                                 (300, 3.0, 1.5), (1, 5.0, 0.2)]))
    _, read, _ = run(text, cull=True, steps=15)
    drawn = kept_in_order(read)
    edges = [0.2, 0.7, 1.5, 0.2]
    checked = 0
    for k, edge in enumerate(edges):
        slots, window = window_centres(read, k)
        half = edge / 2
        extent = np.asarray(read["viewport"], np.float64)
        surely = (holds_centre(window[:, 0] - half, window[:, 0] + half, extent[0])
                  & holds_centre(window[:, 1] - half, window[:, 1] + half, extent[1]))
        maybe = (holds_centre(window[:, 0] - half - MARGIN, window[:, 0] + half + MARGIN, extent[0])
                 & holds_centre(window[:, 1] - half - MARGIN, window[:, 1] + half + MARGIN,
                                extent[1]))
        kept = set(drawn[k].tolist())
        assert set(slots[surely].tolist()) <= kept, f"emitter {k}: a covering sprite was culled"
        assert kept <= set(slots[maybe].tolist()), f"emitter {k}: a sprite off every centre drawn"
        checked += len(slots)
        if edge == 0.2 and len(slots) > 100:
            assert len(kept) < 0.5 * len(slots)   # most 0.2-px squares hold no centre
    assert checked > 800


def test_small_batches_and_empty_pools_draw_as_before(gpu):
    # below the default cull_from nothing culls; at 0, emitters with nothing alive draw nothing
    text = HEADER + emitter("a", 300, "additive", 0.0, "size = 0.05") + emitter(
        "b", 200, "alpha", 1.0, "size = 0.05").replace("rate = 400", "rate = 0")
    with Engine(loads_scene(text, path="<culling>"), size=SIZE) as engine:
        assert not any(":cull" in p.name for p in engine.frame_passes())
    _, read, _ = run(text, cull=True, steps=4)
    drawn = kept_in_order(read)
    assert read["draw_args"][1, 1] == 0 and len(drawn[1]) == 0
    assert read["draw_args"][0, 1] > 0
