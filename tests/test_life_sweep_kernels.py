"""The two sweep kernels (life/step_sweep.wgsl, which counts 3x3 block totals in a register
ring, and life/step_sweep_neighbours.wgsl, the 8-neighbour baseline) against the numpy
reference, exactly: any Life-like rule, ragged and whole-word tori, dead edges, grids narrower
than a subgroup's strip and shorter than the rows loaded above a chunk."""

from __future__ import annotations

import life_model
import numpy as np
import pytest

from emberfx.engine.engine import Engine
from emberfx.model.camera import Camera
from emberfx.model.scene import EntitySpec, Scene, SceneSettings
from emberfx.systems.life.component import Life


def life_engine(size, **fields) -> Engine:
    scene = Scene(SceneSettings(seed=11), Camera(kind="orthographic"),
                  [EntitySpec("life", {"life": Life(size=size, **fields)})])
    return Engine(scene, size=(32, 32))


@pytest.fixture
def small_sweeps(gpu, monkeypatch):
    """16 generations per dispatch (every level of the ring) and chunks of 16 rows, so that
    every chunk edge, strip edge and wrap is crossed on small grids."""
    import emberfx.systems.life.kernels as kernels

    if not gpu.subgroup_size:
        pytest.skip("the device has no subgroups: no sweep kernel runs")
    monkeypatch.setattr(kernels, "SWEEP_GENS", 16)
    monkeypatch.setattr(kernels, "SWEEP_CHUNKS", (16,))


def run_against_numpy(size, kernel, topology, rule="B3/S23", generations=21, density=0.45):
    """Two steps of ``generations`` (16 in one dispatch, the rest in a second) on a soup,
    compared with numpy; returns the engine's stats entry."""
    with life_engine(size, density=density, rule=rule, topology=topology, kernel=kernel,
                     steps_per_frame=generations) as engine:
        stats = engine.stats()["entities"]["life"]
        start = engine.state("life")["cells"]
        assert 0 < start.sum() < start.size
        engine.step(2)
        np.testing.assert_array_equal(
            engine.state("life")["cells"],
            life_model.step(start, rule, topology == "torus", 2 * generations))
    return stats


# Block totals run from 0 to 9: B0 (a dead cell with nothing around it), B8 and S8 (totals 8
# and 9) are the rule table's ends; B2/S (no survival), B/S012345678 (no birth), and rules
# whose birth and survival sets overlap or differ by one.
RULES = ["B3/S23", "B36/S23", "B3678/S34678", "B1357/S1357", "B2/S", "B/S012345678",
         "B0123478/S01234678", "B8/S8", "B45678/S2345", "B0/S"]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("topology", ["torus", "dead"])
def test_block_totals_follow_any_life_like_rule(small_sweeps, rule, topology):
    stats = run_against_numpy((100, 37), "sweep", topology, rule=rule)
    assert stats["kernel"] == "sweep"


# 2048x9: many strips of whole words on a torus (no mask) with fewer rows than the 16 loaded
# above a chunk; 64x70 and 96x200: whole-word tori over several chunks; 33x1, 34x2 and 65x3:
# ragged tori (halo of two words) one to three rows high; 1x5, 7x1, 31x40 and 32x2: one word
# with dead edges; 1000x19: ragged, dead, several strips.
NARROW = [(2048, 9), (64, 70), (96, 200), (33, 1), (34, 2), (65, 3), (1000, 19)]
NARROW_DEAD = [(1, 5), (7, 1), (31, 40), (32, 2)]


@pytest.mark.parametrize("kernel", ["sweep", "sweep_neighbours"])
@pytest.mark.parametrize("size", NARROW, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("topology", ["torus", "dead"])
def test_both_sweeps_stay_exact_on_narrow_short_and_wide_grids(small_sweeps, kernel, size,
                                                               topology):
    stats = run_against_numpy(size, kernel, topology)
    assert stats["kernel"] == kernel and stats["sweep"]["generations_per_dispatch"] == 16


@pytest.mark.parametrize("kernel", ["sweep", "sweep_neighbours"])
@pytest.mark.parametrize("size", NARROW_DEAD, ids=lambda s: f"{s[0]}x{s[1]}")
def test_both_sweeps_stay_exact_one_word_wide_with_dead_edges(small_sweeps, kernel, size):
    assert run_against_numpy(size, kernel, "dead")["kernel"] == kernel


def test_both_sweeps_give_identical_words_at_the_default_layout(gpu):
    """The shipped settings (8 generations per dispatch, the chunk the device gets), a
    density-0.5 soup, 40 generations: the same words from both kernels and from numpy."""
    if not gpu.subgroup_size:
        pytest.skip("the device has no subgroups: no sweep kernel runs")
    words = {}
    for kernel in ("sweep", "sweep_neighbours"):
        with life_engine((1024, 300), density=0.5, kernel=kernel, steps_per_frame=20) as engine:
            start = engine.state("life")["cells"]
            engine.step(2)
            words[kernel] = engine.system_of("life", "life").words(engine.entity_ref("life"))
            np.testing.assert_array_equal(engine.state("life")["cells"],
                                          life_model.step(start, "B3/S23", True, 40))
    np.testing.assert_array_equal(words["sweep"], words["sweep_neighbours"])


@pytest.mark.parametrize("width,topology", [(32, "torus"), (128, "torus"), (100, "dead")])
def test_the_baseline_sweep_is_selectable_and_falls_back_like_the_sweep(gpu, width, topology):
    """kernel = "sweep_neighbours" runs where the sweep runs; on a torus one word wide (or
    without subgroups) it falls back to the single-generation kernels, as "sweep" does."""
    with life_engine((width, 24), density=0.4, topology=topology, kernel="sweep_neighbours",
                     steps_per_frame=3) as engine:
        stats = engine.stats()["entities"]["life"]
        one_word_torus = topology == "torus" and width <= 32
        if gpu.subgroup_size and not one_word_torus:
            assert stats["kernel"] == "sweep_neighbours"
            assert stats["sweep"]["lanes"] == gpu.subgroup_size
            assert [p for p in engine.passes() if ":life:sweep" in p] == ["life:life:sweep0"]
        else:
            assert stats["kernel"] == ("quad" if width % 128 == 0 else "word")
            assert "sweep" not in stats


def test_the_bench_checks_population_and_words_against_the_reference(gpu):
    """`emberfx bench life` compares every variant with the reference kernel through
    checked_state: the population equals the live cells, and the digest tells states apart."""
    from emberfx.bench.life import checked_state

    with life_engine((100, 40), density=0.5, steps_per_frame=1) as engine:
        population, digest = checked_state(engine)
        assert population == int(engine.state("life")["cells"].sum()) > 0
        engine.step(1)
        assert checked_state(engine)[1] != digest
