"""Life layers on the GPU against the numpy reference (np.roll neighbour count), exactly."""

from __future__ import annotations

import numpy as np
import pytest

from emberfx.camera import Camera
from emberfx.engine import Engine
from emberfx.errors import DeviceLimitError, SceneError
from emberfx.scene import EntitySpec, Scene, SceneSettings, loads_scene
from emberfx.systems.life import pack_cells, unpack_cells
from emberfx.systems.life_component import Life

import life_model

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
    np.testing.assert_array_equal(engine.state("life")["cells"], life_model.step(start, generations=6))
    population[1] = int(life_model.step(start, generations=6).sum())
    engine.entity("life").life.paused = True
    engine.step(3)
    np.testing.assert_array_equal(engine.state("life")["cells"], life_model.step(start, generations=6))
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
    from emberfx.readback import read_array
    layer = engine.system_of("life", "life").layers["life"]
    counted = int(read_array(engine.device, layer.buffers["counters"], np.uint32, 1)[0])
    assert counted == int(cells.sum())


def test_display_fills_the_view_with_the_palette(gpu):
    engine = life_engine((8, 8), alive_color="#ffffff", dead_color="#000000")
    system = engine.system_of("life", "life")
    from emberfx.systems.life import pack_cells as pack
    layer = system.layers["life"]
    cells = np.zeros((8, 8), bool)
    cells[0, 0] = True                                 # top-left cell alive
    engine.device.queue.write_buffer(system.current_buffer(layer), 0, pack(cells).tobytes())
    image = engine.render()                            # 64x48 view: the grid is 48x48, centred
    assert image[0, 8, 0] == 255 and image[5, 13, 0] == 255     # top-left cell: 6x6 pixels
    assert image[0, 14, 0] == 0 and image[47, 55, 0] == 0
    background = image[20, 2, 0]                       # outside the grid: the scene background
    assert background == 16 and image[20, 61, 0] == background


def test_grid_beyond_the_device_is_refused_with_numbers(gpu):
    with pytest.raises(DeviceLimitError) as info:
        life_engine((1 << 20, 1 << 20))
    assert "life.size = 1048576x1048576" in str(info.value) and "bytes" in str(info.value)


@pytest.mark.parametrize("text,pieces", [
    ('rule = "B9/S23"', ["life.rule", "B3/S23"]),
    ('size = [0, 10]', ["life.size[0]", ">= 1"]),
    ('topology = "klein"', ["life.topology", "torus"]),
    ('memory = "shared"', ["life.memory", "pingpong"]),
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
def test_single_generation_kernels_stay_exact(gpu, kernel, size, topology, monkeypatch):
    """The fallbacks where the sweep cannot run (no subgroups, a torus one word wide), and the
    bench's baselines: life/step_quad.wgsl (widths that are multiples of 128) and life/step.wgsl."""
    import emberfx.systems.life as life_system

    monkeypatch.setattr(life_system, "PINGPONG_KERNEL", kernel)
    engine = life_engine(size, density=0.35, rule="B36/S23", topology=topology, steps_per_frame=5)
    layer = engine.system_of("life", "life").layers["life"]
    assert layer.kernel == ("quad" if kernel == "quad" and size[0] % 128 == 0 else "word")
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
    import emberfx.systems.life as life_system

    if not gpu.subgroup_size:
        pytest.skip("the device has no subgroups: the sweep falls back (tested above)")
    monkeypatch.setattr(life_system, "SWEEP_GENS", 16)
    monkeypatch.setattr(life_system, "SWEEP_CHUNKS", (16,))
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
    from emberfx.systems.life import Sweep, pingpong_plan, plan_sweep

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
