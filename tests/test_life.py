"""Life layers on the GPU against the numpy reference (np.roll neighbour count), exactly."""

from __future__ import annotations

import life_model
import numpy as np
import pytest
import srgb_model as srgb

from emberfx.core.errors import DeviceLimitError, SceneError
from emberfx.engine.engine import Engine
from emberfx.model.camera import Camera
from emberfx.model.scene import EntitySpec, Scene, SceneSettings, loads_scene
from emberfx.systems.life.component import Life
from emberfx.systems.life.system import pack_cells, unpack_cells

# Where the device has subgroups the default kernel is life/step_sweep.wgsl, except on a torus one
# word wide (1x1, 31x7, 32x32). 128x3 and 384x37 (and 4096x64) are the single-generation quad
# kernel's cases (test_single_generation_kernels_stay_exact): one group of four words that is both
# edges, three groups, rows not a multiple of the window.
SIZES = [(1, 1), (31, 7), (32, 32), (33, 65), (1000, 777), (4096, 64), (128, 3), (384, 37)]
RULES = ["B3/S23", "B36/S23", "B3678/S34678"]
GENERATIONS = 50


def expected_kernel(gpu, width: int, topology: str) -> str:
    if gpu.subgroup_size and not (topology == "torus" and width <= 32):
        return "sweep"
    return "quad" if width % 128 == 0 else "word"


def life_engine(size=(64, 48), seed=3, **fields) -> Engine:
    comp = Life(size=size, **fields)
    scene = Scene(SceneSettings(seed=seed), Camera(kind="orthographic"),
                  [EntitySpec("life", {"life": comp})])
    return Engine(scene, size=(64, 48))


@pytest.fixture(scope="module")
def references():
    return {}


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("topology", ["torus", "dead"])
@pytest.mark.parametrize("rule", RULES)
def test_fifty_generations_equal_numpy_in_both_memory_modes(gpu, size, topology, rule):
    start = None
    results = {}
    for memory in ("pingpong", "inplace"):
        # 10 generations per step: pingpong sweeps 8 in one dispatch and 2 in a second
        engine = life_engine(size, density=0.35, rule=rule, topology=topology, memory=memory,
                             steps_per_frame=10)
        first = engine.state("life")["cells"]
        start = first if start is None else start
        assert np.array_equal(first, start)           # same seed, same soup
        engine.step(GENERATIONS // 10)
        results[memory] = engine.state("life")["cells"]
        system = engine.system_of("life", "life")
        if memory == "pingpong":
            assert system.layers["life"].kernel == expected_kernel(gpu, size[0], topology)
        words = system.words(engine._ref("life"))
        width, height = size
        stride = (width + 31) // 32
        if width % 32:                                 # padding bits stay zero
            last = words.reshape(height, stride)[:, -1]
            assert not (last >> np.uint32(width % 32)).any()
        engine.close()
    expected = life_model.step(start, rule, topology == "torus", GENERATIONS)
    assert start.sum() > 0 and start.shape == (size[1], size[0])
    np.testing.assert_array_equal(results["pingpong"], expected)
    np.testing.assert_array_equal(results["inplace"], expected)


def test_pack_and_unpack_round_trip_with_ragged_rows():
    rng = np.random.default_rng(0)
    for w, h in [(1, 1), (31, 3), (32, 2), (33, 5), (95, 4)]:
        cells = rng.random((h, w)) < 0.5
        words = pack_cells(cells)
        assert words.dtype == np.uint32 and len(words) == h * ((w + 31) // 32)
        assert words[0] & 1 == cells[0, 0]
        np.testing.assert_array_equal(unpack_cells(words, w, h), cells)


def test_steps_per_frame_paused_and_population_readback(gpu):
    engine = life_engine((70, 50), density=0.3, steps_per_frame=3)
    start = engine.state("life")["cells"]
    population = {}                                    # step index -> live cells after it
    engine.step(2)
    np.testing.assert_array_equal(engine.state("life")["cells"],
                                  life_model.step(start, generations=6))
    population[1] = int(life_model.step(start, generations=6).sum())
    engine.entity("life").life.paused = True
    engine.step(3)
    np.testing.assert_array_equal(engine.state("life")["cells"],
                                  life_model.step(start, generations=6))
    engine.entity("life").life.paused = False
    engine.entity("life").life.steps_per_frame = 4
    for k in range(4):
        engine.step(1)
        population[5 + k] = int(life_model.step(start, generations=10 + 4 * k).sum())
    np.testing.assert_array_equal(engine.state("life")["cells"],
                                  life_model.step(start, generations=22))
    stats = engine.stats()
    assert stats["entities"]["life"]["generation"] == 22
    frame = stats["readback_frame"]                    # read back 1-2 steps late, never a stall
    if frame is not None and frame in population:
        assert stats["entities"]["life"]["population"] == population[frame]
    layer = engine.system_of("life", "life").layers["life"]
    kind = "sweep" if layer.kernel == "sweep" else "step"
    dispatches = 1 if kind == "sweep" else 4           # 4 generations: one sweep, or 4 steps
    assert [p for p in engine.passes() if f":life:{kind}" in p] == [
        f"life:life:{kind}{k}" for k in range(dispatches)]
    assert stats["compute_passes_per_step"] == 1       # all generations in one compute pass


def test_population_counts_the_live_cells_exactly(gpu):
    engine = life_engine((1000, 333), density=0.4)
    for _ in range(3):
        engine.step(1)
    cells = engine.state("life")["cells"]
    from emberfx.core.readback import read_array
    layer = engine.system_of("life", "life").layers["life"]
    counted = int(read_array(engine.device, layer.buffers["counters"], np.uint32, 1)[0])
    assert counted == int(cells.sum())


def test_display_fills_the_view_with_the_palette(gpu):
    engine = life_engine((8, 8), alive_color="#ffffff", dead_color="#000000")
    system = engine.system_of("life", "life")
    from emberfx.systems.life.system import pack_cells as pack
    layer = system.layers["life"]
    # 64x48 view: the grid covers it at 8 px per cell, 64 px tall, so rows 0 and 7 are cropped
    cells = np.zeros((8, 8), bool)
    cells[1, 0] = True                                 # the top-left visible cell
    cells[0, 7] = True                                 # cropped: never shown
    engine.resources.write(system.current_buffer(layer), pack(cells).tobytes())
    image = engine.render()
    assert image[0, 0, 0] == 255 and image[7, 7, 0] == 255       # cell (0, 1): 8x8 pixels
    assert image[0, 8, 0] == 0 and image[8, 0, 0] == 0 and image[0, 63, 0] == 0
    assert (image[..., 0] == 255).sum() == 64
    # no background (red 16) anywhere: dead (0) or alive (255) only
    assert set(np.unique(image[..., 0])) == {0, 255}


def test_additive_quad_adds_its_light_over_the_background_layer(gpu):
    """An additive quad, first in entity order, still lands on an opaque fill layer listed after
    it: alive cells add their linear colour to the fill's, black dead cells add nothing."""
    grey, light = "#404040", "#607080"
    additive = Life(size=(2, 1), display="quad", blend="additive", quad_size=(8.0, 8.0),
                    alive_color=light, dead_color="#000000")
    backdrop = Life(size=(8, 8), alive_color=grey, dead_color=grey)
    scene = Scene(SceneSettings(seed=1), Camera(kind="orthographic", height=2.0),
                  [EntitySpec("glow", {"life": additive}), EntitySpec("back", {"life": backdrop})])
    engine = Engine(scene, size=(64, 48))
    system = engine.system_of("glow", "life")
    cells = np.array([[True, False]])                      # left half alive, right half dead
    engine.resources.write(system.current_buffer(system.layers["glow"]),
                           pack_cells(cells).tobytes())
    image = engine.render()[..., :3].astype(int)
    grey_rgb = np.array([0x40] * 3)
    summed = srgb.encode(srgb.decode(grey_rgb) + srgb.decode([0x60, 0x70, 0x80]))
    assert np.abs(image[:, :28] - summed).max() <= 1, (image[0, 0], summed)
    assert np.abs(image[:, 36:] - grey_rgb).max() <= 1, (image[0, 63], grey_rgb)
    # the draw comes after every opaque layer whatever the entity order
    order = engine.passes()
    assert order.index("glow:life:draw") > order.index("back:life:draw")
    engine.close()


def test_grid_beyond_the_device_is_refused_with_numbers(gpu):
    with pytest.raises(DeviceLimitError) as info:
        life_engine((1 << 20, 1 << 20))
    assert "life.size = 1048576x1048576" in str(info.value) and "bytes" in str(info.value)


@pytest.mark.parametrize("text,pieces", [
    ('rule = "B9/S23"', ["life.rule", "B3/S23"]),
    ('size = [0, 10]', ["life.size[0]", ">= 1"]),
    ('topology = "klein"', ["life.topology", "torus"]),
    ('memory = "shared"', ["life.memory", "pingpong"]),
    ('kernel = "fast"', ["life.kernel", "'auto'", "'sweep'", "'quad'", "'word'", "'fast'"]),
    ('memory = "inplace"\nkernel = "quad"', ["life.kernel", '"auto"', "inplace", "'quad'"]),
    ('soup = [10, 10, 100, 5]', ["life.soup", "inside the 64x48 grid"]),
])
def test_bad_life_fields_are_one_line_errors(text, pieces):
    with pytest.raises(SceneError) as info:
        base = "" if text.startswith("size") else "size = [64, 48]\n"
        loads_scene(f'[[entity]]\nname = "life"\n[entity.life]\n{base}{text}\n', path="life.toml")
    message = str(info.value)
    assert "\n" not in message and "entity 'life'" in message
    for piece in pieces:
        assert piece in message, (piece, message)


@pytest.mark.parametrize("kernel", ["quad", "word"])
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("topology", ["torus", "dead"])
def test_single_generation_kernels_stay_exact(gpu, kernel, size, topology):
    """The fallbacks where the sweep cannot run (no subgroups, a torus one word wide), and the
    bench's baselines: life/step_quad.wgsl (widths that are multiples of 128) and life/step.wgsl."""
    engine = life_engine(size, density=0.35, rule="B36/S23", topology=topology, steps_per_frame=5,
                         kernel=kernel)
    expected = "quad" if kernel == "quad" and size[0] % 128 == 0 else "word"
    assert engine.system_of("life", "life").layers["life"].kernel == expected
    assert engine.stats()["entities"]["life"]["kernel"] == expected
    start = engine.state("life")["cells"]
    engine.step(4)
    np.testing.assert_array_equal(engine.state("life")["cells"],
                                  life_model.step(start, "B36/S23", topology == "torus", 20))


# widths: a ragged torus of 2 words (the halo is 2 words, one of them a single cell), several
# strips with ragged and whole last words, 65 (3 words, 1 cell in the last); heights: one chunk,
# several chunks and a part of one (chunks of 16 rows here), fewer rows than the halo above
SWEEP_SIZES = [(33, 70), (34, 9), (64, 70), (100, 130), (1025, 67), (65, 3), (96, 200), (1000, 5)]


@pytest.mark.parametrize("size", SWEEP_SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("topology", ["torus", "dead"])
@pytest.mark.parametrize("generations", [16, 21])
def test_sweep_across_strips_and_chunks_stays_exact(gpu, size, topology, generations,
                                                    monkeypatch):
    """life/step_sweep.wgsl at its most generations per dispatch (16: one register window per
    generation) with 16-row chunks, so that every strip and chunk edge and
    every wrap is crossed; 21 = 16 + a dispatch of 5."""
    import emberfx.systems.life.kernels as kernels

    if not gpu.subgroup_size:
        pytest.skip("the device has no subgroups: the sweep falls back (tested above)")
    monkeypatch.setattr(kernels, "SWEEP_GENS", 16)
    monkeypatch.setattr(kernels, "SWEEP_CHUNKS", (16,))
    engine = life_engine(size, density=0.4, topology=topology, steps_per_frame=generations)
    system = engine.system_of("life", "life")
    layer = system.layers["life"]
    assert layer.kernel == "sweep" and layer.sweep.chunk == 16
    assert layer.sweep.halo == (2 if topology == "torus" and size[0] % 32 else 1)
    assert system._plan(layer) == [16] + ([5] if generations == 21 else [])
    start = engine.state("life")["cells"]
    engine.step(2)
    np.testing.assert_array_equal(engine.state("life")["cells"],
                                  life_model.step(start, "B3/S23", topology == "torus",
                                                  2 * generations))


def test_sweep_layout_and_dispatch_plan():
    from emberfx.systems.life.kernels import Sweep, pingpong_plan, plan_sweep

    assert plan_sweep(None, 4096, 64, True, 1) is None            # no subgroups
    assert plan_sweep(32, 31, 64, True, 1) is None                # a torus one word wide
    assert plan_sweep(32, 31, 64, False, 1) == Sweep(32, 1, 256)  # dead edges: fine
    assert plan_sweep(8, 65, 64, True, 1).halo == 2               # ragged torus
    assert plan_sweep(4, 65, 64, True, 1) is None                 # no own column left
    # 65536x32768 on 32 lanes: 69 strips x 128 chunks of 256 rows keep 8192 subgroups busy;
    # 16384x16384 needs chunks of 64 rows (18 x 256 subgroups is the most it gets)
    assert plan_sweep(32, 65536, 32768, True, 8192).chunk == 256
    assert plan_sweep(32, 16384, 16384, True, 8192).chunk == 64
    assert Sweep(32, 1, 256).grid(2048, 32768) == (35, 128, 1)     # 2 strips of 30 words each
    assert Sweep(8, 2, 16).grid(3, 70) == (1, 5, 1)
    assert pingpong_plan("sweep", 8) == [8] and pingpong_plan("sweep", 0) == []
    assert pingpong_plan("sweep", 21) == [8, 8, 5] and pingpong_plan("word", 3) == [1, 1, 1]


# ---------------------------------------------------------------------------- trails

def trail_oracle(cells_per_step, fade: float) -> np.ndarray:
    """The trail after each simulation step: 1 where the cell lives, else the previous value
    times trail_fade, in float32 as on the GPU (one multiply per step, so exactly rounded)."""
    trail = np.zeros(cells_per_step[0].shape, np.float32)
    for cells in cells_per_step:
        trail = np.where(cells, np.float32(1.0), trail * np.float32(fade))
    return trail


def trail_buffer(engine) -> np.ndarray:
    from emberfx.core.readback import read_array

    layer = engine.system_of("life", "life").layers["life"]
    w, h = layer.texture_size
    return read_array(engine.device, layer.buffers["trail"], np.float32, w * h).reshape(h, w)


@pytest.mark.parametrize("memory", ["pingpong", "inplace"])
def test_trail_fades_once_per_step_and_drawing_never_changes_it(gpu, memory):
    # 45x37: neither a multiple of the 16x16 workgroup nor of 32; 3 generations per step, so the
    # trail follows steps, not generations
    engine = life_engine((45, 37), density=0.4, memory=memory, steps_per_frame=3,
                         trail_color="#3060ff", trail_fade=0.7)
    assert "life:life:trail" in engine.passes()
    cells, after_each_step = engine.state("life")["cells"], []
    for _ in range(6):
        engine.step(1)
        cells = life_model.step(cells, "B3/S23", True, 3)
        after_each_step.append(cells)
    np.testing.assert_array_equal(engine.state("life")["cells"], cells)
    expected = trail_oracle(after_each_step, 0.7)
    assert 0.0 < expected[~cells].max() < 1.0              # some cells died and glow
    np.testing.assert_allclose(trail_buffer(engine), expected, rtol=1e-6, atol=0)
    first = engine.render()
    for _ in range(3):                                      # draws neither age nor move it
        np.testing.assert_array_equal(engine.render(), first)
    np.testing.assert_allclose(trail_buffer(engine), expected, rtol=1e-6, atol=0)
    engine.step(1)                                          # one step ages it once
    cells = life_model.step(cells, "B3/S23", True, 3)
    np.testing.assert_allclose(trail_buffer(engine), trail_oracle(after_each_step + [cells], 0.7),
                               rtol=1e-6, atol=0)


def test_no_trail_no_trail_pass(gpu):
    engine = life_engine((45, 37), density=0.4)
    assert not any(":life:trail" in p for p in engine.passes())
    engine.step(2)
    assert not trail_buffer(engine).any()
    engine.entity("life").life.trail_color = "#ff0000"     # live: the pass appears
    engine.step(1)
    assert "life:life:trail" in engine.passes()
    np.testing.assert_array_equal(trail_buffer(engine) == 1.0, engine.state("life")["cells"])


def test_png_after_n_steps_equals_the_last_video_frame(gpu, tmp_path):
    """`emberfx render` to .png draws only the final step; to a video it draws every step. The
    trail must not depend on that: the CLI's PNG equals the last of the frames drawn after each
    step (exactly: same adapter, lossless PNG)."""
    import subprocess
    import sys
    from pathlib import Path

    from PIL import Image

    from emberfx.model.scene import load_scene

    scene_path = Path(__file__).resolve().parent.parent / "scenes" / "life.toml"
    steps, size = 120, (320, 180)
    engine = Engine(load_scene(scene_path), size=size)
    assert engine.entity("life").life.trail_color is not None
    frames = []
    for _ in range(steps):
        engine.step(1)
        frames.append(engine.render())
    png = tmp_path / "life.png"
    proc = subprocess.run([sys.executable, "-m", "emberfx", "render", str(scene_path), "--frames",
                           str(steps), "--out", str(png), "--size", f"{size[0]}x{size[1]}"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    image = np.asarray(Image.open(png).convert("RGBA"))
    np.testing.assert_array_equal(image, frames[-1])
    # the trail is in the picture: colours that are neither alive, dead nor background
    layer_pixels = {tuple(p) for p in image[..., :3].reshape(-1, 3)}
    assert len(layer_pixels) > 10


# ---------------------------------------------------------------------------- pattern rules

HIGHLIFE_CLUSTER = "#N Six\nx = 5, y = 5, rule = B36/S23\nb3o$o3bo$o3bo$o3bo$b3o!\n"


def rule_scene(tmp_path, rule: str):
    (tmp_path / "six.rle").write_text(HIGHLIFE_CLUSTER)
    scene = tmp_path / "six.toml"
    scene.write_text(f'[scene]\nname = "six"\nseed = 1\n\n[[entity]]\nname = "board"\n'
                     f'[entity.life]\nsize = [32, 24]\nrule = "{rule}"\npattern = "six.rle"\n')
    return scene


def test_a_header_rule_other_than_the_layers_is_warned_once(gpu, tmp_path):
    """The CLI path: `emberfx render` of a scene whose pattern says B36/S23 on a B3/S23 layer
    runs B3/S23 and says so once on stderr, naming both rules."""
    import subprocess
    import sys

    scene = rule_scene(tmp_path, "B3/S23")
    proc = subprocess.run([sys.executable, "-m", "emberfx", "render", str(scene), "--frames", "3",
                           "--out", str(tmp_path / "six.png"), "--size", "64x48"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    warnings = [ln for ln in proc.stderr.splitlines() if "warning" in ln]
    expected = ("emberfx: warning: entity 'board': life.pattern 'six.rle' says rule = B36/S23 "
                "in its header, but the layer's rule is B3/S23; the layer's rule runs")
    assert warnings == [expected], proc.stderr


def test_the_layers_rule_runs_and_a_rebuild_does_not_warn_again(gpu, tmp_path, capsys):
    from emberfx.model.scene import load_scene

    engine = Engine(load_scene(rule_scene(tmp_path, "B3/S23")), size=(64, 48))
    assert capsys.readouterr().err.count("warning") == 1
    start = engine.state("board")["cells"]
    engine.step(9)
    np.testing.assert_array_equal(engine.state("board")["cells"],
                                  life_model.step(start, "B3/S23", True, 9))
    assert not np.array_equal(life_model.step(start, "B36/S23", True, 9),
                              life_model.step(start, "B3/S23", True, 9))   # the rules differ
    engine.entity("board").life.offset = [1, 1]        # a rebuild reads the pattern again
    engine.step(1)
    assert "warning" not in capsys.readouterr().err
    # the same rule spelt otherwise is no conflict
    Engine(load_scene(rule_scene(tmp_path, "b36s23")), size=(64, 48))
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize("text,birth,survive", [
    ("B3/S23", {3}, {2, 3}), ("b36s23", {3, 6}, {2, 3}), ("S23/B3", {3}, {2, 3}),
    ("23/3", {3}, {2, 3}), ("23/36", {3, 6}, {2, 3}),
    ("B3678/S34678", {3, 6, 7, 8}, {3, 4, 6, 7, 8}),
    ("B2/S", {2}, set()), ("/2", {2}, set())])
def test_the_numpy_oracle_reads_both_rule_notations_like_the_project(text, birth, survive):
    """The oracle's own rule parser (tests/life_model.py) against hand-written sets, and the
    project's parse_rule against the same sets, so neither can silently follow the other."""
    from emberfx.systems.life.rules import parse_rule

    assert life_model.rule_sets(text) == (frozenset(birth), frozenset(survive))
    masks = parse_rule(text)
    assert masks == (sum(1 << n for n in birth), sum(1 << n for n in survive))
