"""`emberfx gallery DIR` (app/gallery_media.py): each scene's picture at its preview time and
its clip, the contact sheet (app/contact_sheet.py) and the page, rendered for real on lavapipe
for one cheap scene; the sheet's layout and the clip window checked without a GPU.

Oracles: the picture against an Engine run by hand to the preview step (the same bytes on one
adapter); the clip read back by imageio (its own ffmpeg reader) for its frame count and size,
and its last frame against the picture halved by numpy; the sheet's tiles against the pictures
averaged over 2x2 blocks by numpy (a tile is half a picture wide).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from emberfx.app import cli
from emberfx.app.contact_sheet import BACKGROUND, GAP, LABEL_BAND, TILE_WIDTH, layout
from emberfx.app.gallery import CLIP_WIDTH, GALLERY_WIDTH, gallery_page
from emberfx.app.gallery_media import clip_steps, hero_take
from emberfx.model.scene import load_scene

ROOT = Path(__file__).resolve().parent.parent
SHEET_TOLERANCE = 1.5
"""levels of 255: the mean absolute difference between a tile (Lanczos) and its picture averaged
over 2x2 blocks (a box filter); measured 0.30 on the flag (2.0 on the fountain, whose
one-pixel sparks are where the two filters part most)"""
CLIP_TOLERANCE = 4.0
"""levels of 255: the mean absolute difference between the clip's last frame (H.264 at CRF 25,
yuv420p, scaled by Lanczos) and the picture averaged over 3x3 blocks to a third, then doubled;
measured 2.35 on the flag, whose frame before it (one clip frame, two steps, earlier) is 3.4
off and its first frame 14.4: the last frame must also be the nearest"""


def read_rgb(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB")).astype(np.float64)


def halved(image: np.ndarray) -> np.ndarray:
    """The mean of each 2x2 block (an independent box filter)."""
    h, w = image.shape[0] // 2 * 2, image.shape[1] // 2 * 2
    return image[:h, :w].reshape(h // 2, 2, w // 2, 2, -1).mean(axis=(1, 3))


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_gallery_command_writes_picture_clip_sheet_and_page(gpu, tmp_path, capsys):
    import imageio.v2 as imageio

    from emberfx.engine.engine import Engine

    code, out, err = run_cli(capsys, "gallery", tmp_path, "flag")
    assert code == 0, err
    scene = load_scene(ROOT / "scenes" / "flag.toml")   # 960x540, preview 2 s at 60 steps/s
    picture = read_rgb(tmp_path / "gallery" / "flag.png")
    assert picture.shape == (270, GALLERY_WIDTH, 3)
    with Engine(scene, size=(480, 270)) as engine:   # the preview, rendered here by hand
        engine.step(120)
        expected = engine.render()[..., :3]
    assert np.array_equal(picture, expected), "the picture is not the preview step's"

    reader = imageio.get_reader(tmp_path / "gallery" / "clips" / "flag.mp4", "ffmpeg")
    frames = [np.asarray(frame) for frame in reader.iter_data()]
    reader.close()
    assert len(frames) == 60   # 2 s at 30 frames a second: steps 2, 4, ..., 120
    assert all(frame.shape == (180, CLIP_WIDTH, 3) for frame in frames)
    # the last frame is the picture (the clip ends at the preview), at two thirds of its size
    third = picture.reshape(90, 3, 160, 3, 3).mean(axis=(1, 3))
    two_thirds = np.repeat(np.repeat(third, 2, axis=0), 2, axis=1)
    off = [float(np.abs(frame - two_thirds).mean()) for frame in frames]
    assert off[-1] <= CLIP_TOLERANCE and off[-1] == min(off), off
    assert off[0] > 3 * CLIP_TOLERANCE, "the clip does not move"

    sheet = read_rgb(tmp_path / "gallery.png")
    # one tile: 240x135 (half the picture) after a gap, its label's band under it
    assert sheet.shape == (GAP + 135 + LABEL_BAND + GAP, GAP + TILE_WIDTH + GAP, 3)
    tile = sheet[GAP:GAP + 135, GAP:GAP + TILE_WIDTH]
    assert np.abs(tile - halved(picture)).mean() <= SHEET_TOLERANCE
    label = sheet[GAP + 135 + 1:GAP + 135 + LABEL_BAND, GAP:GAP + TILE_WIDTH]
    assert (np.abs(label - BACKGROUND).max(axis=2) > 100).sum() > 50, "no label under the tile"

    assert (tmp_path / "gallery.md").read_text("utf-8") == gallery_page()
    assert not (tmp_path / "showcase.png").exists()   # the hero comes with the showcase only
    assert "flag.mp4 (60 frames at 30 fps, 320x180)" in out


def test_python_m_emberfx_gallery_without_clips_renders_the_picture_alone(gpu, tmp_path):
    """The module entry, and --no-clips: the picture, no clip; the sheet and the page."""
    result = subprocess.run([sys.executable, "-m", "emberfx.gallery", str(tmp_path),
                             "life_rules", "--no-clips"], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    with Image.open(tmp_path / "gallery" / "life_rules.png") as image:
        assert image.size == (480, 200)   # 960x400 at 480 wide
    assert not (tmp_path / "gallery" / "clips" / "life_rules.mp4").exists()
    assert (tmp_path / "gallery.png").is_file() and (tmp_path / "gallery.md").is_file()


def test_an_unknown_scene_is_one_line_with_a_suggestion_and_writes_nothing(tmp_path, capsys):
    code, out, err = run_cli(capsys, "gallery", tmp_path, "flag", "fountian")
    assert code == 1
    assert err.splitlines() == ["emberfx: error: gallery: no bundled scene 'fountian'; did you "
                                "mean 'fountain'?"]
    assert list(tmp_path.iterdir()) == []


def test_page_only_builds_the_sheet_from_the_pictures_there(tmp_path, capsys):
    """Plain-coloured pictures of three scenes (no GPU): each tile is its colour exactly, in
    name order, two rows of at most four; the taller 3:2 picture sets its row's height."""
    colours = {"flag": (200, 30, 40), "fountain": (20, 200, 60), "mandelbrot": (30, 60, 220)}
    sizes = {"flag": (480, 270), "fountain": (480, 270), "mandelbrot": (480, 320)}
    (tmp_path / "gallery").mkdir()
    for name, colour in colours.items():
        Image.new("RGB", sizes[name], colour).save(tmp_path / "gallery" / f"{name}.png")
    code, out, err = run_cli(capsys, "gallery", tmp_path, "--page-only")
    assert code == 0, err
    sheet = read_rgb(tmp_path / "gallery.png")
    tall = TILE_WIDTH * 320 // 480   # 160
    assert sheet.shape == (GAP + tall + LABEL_BAND + GAP, GAP + 3 * (TILE_WIDTH + GAP), 3)
    (width, height), tiles = layout(sizes)
    assert (height, width) == sheet.shape[:2]
    assert [t.name for t in tiles] == ["flag", "fountain", "mandelbrot"]
    for tile, left in zip(tiles, (GAP, 2 * GAP + TILE_WIDTH, 3 * GAP + 2 * TILE_WIDTH)):
        assert tile.x == left
        box = sheet[tile.y:tile.y + tile.height, tile.x:tile.x + tile.width]
        assert box.shape[:2] == ((135, TILE_WIDTH) if tile.name != "mandelbrot"
                                 else (tall, TILE_WIDTH))
        assert np.array_equal(box, np.broadcast_to(colours[tile.name], box.shape)), tile.name
    # the 16:9 tiles sit at the middle of the row the 3:2 one sets
    assert tiles[0].y == GAP + (tall - 135) // 2 and tiles[2].y == GAP
    assert (tmp_path / "gallery.md").read_text("utf-8") == gallery_page()


def test_five_pictures_make_two_rows():
    (width, height), tiles = layout({f"s{k}": (480, 270) for k in range(5)})
    assert width == GAP + 4 * (TILE_WIDTH + GAP)
    assert height == GAP + 2 * (135 + LABEL_BAND + GAP)
    assert (tiles[4].x, tiles[4].y) == (GAP, GAP + 135 + LABEL_BAND + GAP)


@pytest.mark.parametrize("name, preview_step, first, last", [
    ("fountain", 150, 32, 150),   # preview at 2.5 s: the clip is the 2 s up to it
    ("campfire", 240, 122, 240),  # preview at 4 s
    ("dam_break", 30, 2, 120),    # preview at 0.5 s: the first 2 s, the preview among them
])
def test_the_clip_window_ends_at_the_preview(name, preview_step, first, last):
    scene = load_scene(ROOT / "scenes" / f"{name}.toml")
    assert scene.settings.preview_steps() == preview_step
    steps = clip_steps(scene)
    assert (steps[0], steps[-1], steps.step, len(steps)) == (first, last, 2, 60)


def test_the_readme_video_is_the_showcase_whole_shot(tmp_path):
    """The showcase's [scene] duration is 10 s and its preview 5 s: 600 frames, the picture at
    step 300."""
    take = hero_take(load_scene(ROOT / "scenes" / "showcase.toml"), tmp_path)
    assert (take.size, take.picture_step, take.clip_size) == ((1280, 720), 300, (960, 540))
    assert (take.clip_steps[0], take.clip_steps[-1], take.fps) == (1, 600, 60.0)
    assert (take.picture, take.clip) == (tmp_path / "showcase.png", tmp_path / "showcase.mp4")


def test_the_site_gets_the_clips_addresses_relative_to_the_built_page():
    pytest.importorskip("mkdocs")
    from emberfx.app.gallery_hook import site_media

    html = ('<p><video src="gallery/clips/a.mp4" poster="gallery/a.png" muted></video></p>'
            '<img src="gallery/a.png"><video src="https://x.org/b.mp4"></video>')
    assert site_media(html, "gallery.md", "gallery/") == (
        '<p><video src="clips/a.mp4" poster="a.png" muted></video></p>'
        '<img src="gallery/a.png"><video src="https://x.org/b.mp4"></video>')
    assert site_media(html, "gallery.md", "gallery.html") == html
    assert site_media('<video src="../gallery/a.mp4">', "guides/web.md", "guides/web/") == \
        '<video src="../../gallery/a.mp4">'
