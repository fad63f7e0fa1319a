"""emberfx.bench.capacity: bytes per item follow from the WGSL struct sizes and the buffers the
systems really allocate; the largest entities and the interconnect tables follow from them by
hand-written formulas; docs/scaling.md shows exactly the tables the module computes."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from emberfx.bench import capacity
from emberfx.core.layout import struct_dtype
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.systems.emitter.tuning import DEFAULT

DOC = Path(__file__).resolve().parent.parent / "docs" / "scaling.md"


def test_struct_sizes_are_two_vec4s():
    # Particle and LifeParticle are two vec4f each: 2 * 16 bytes
    assert struct_dtype("emitter/types.wgsl", "Particle").itemsize == 32
    assert struct_dtype("particle_life/types.wgsl", "LifeParticle").itemsize == 32


def test_bytes_per_item_by_hand():
    per = capacity.per_item()
    # 32 B particle + 4 B alive-list entry; per 256-slot block: 8 mask words + block_alive +
    # block_free (40 B); the scans of block_alive and block_free add 4 B per 1024 blocks each
    # (their upper levels are under 1e-6 B per slot)
    emitter = 32 + 4 + 40 / 256 + 8 / (256 * 1024)
    assert per["emitter slot (additive, ordered)"] == pytest.approx(emitter, abs=1e-5)
    assert per["emitter slot (alpha, ordered)"] == pytest.approx(emitter + 4, abs=1e-5)
    assert per["Life cell (pingpong)"] == 0.25 and per["Life cell (inplace)"] == 0.125
    # two particle buffers (64 B), ids0/ids1/cell_of/cell_particles (16 B), the positions in
    # cell order (16 B), 8 B per cell of 20, and the cell scan's sums, 4 B per 1024 cells
    assert per["particle-life particle (20 per cell)"] == pytest.approx(
        96 + 8 / 20 + 4 / (1024 * 20), abs=1e-5)


def registry_sizes(engine, entity: str, family: str, keys: set[str]) -> dict[str, int]:
    """Bytes of the entity's buffers named in ``keys``; a scan's per-level sums
    (``values:scan_sumsK``) add up under ``values:scan_sums``."""
    resources = engine.system_of(entity, family).resources
    sizes: dict[str, int] = {}
    for name in resources.names(entity):
        key = name.split("/", 1)[1].rstrip("0123456789")
        if key in keys:
            sizes[key] = sizes.get(key, 0) + resources.buffer_view(name).size
    return sizes


EMITTER_KEYS = {"particles", "alive_list", "block_alive", "free_mask", "block_free",
                "sort_keys", "alive_mask", "block_alive:scan_sums", "block_free:scan_sums",
                "tiles", "birth_slots"}
PARTICLE_LIFE_KEYS = {"particles", "ids", "cell_of", "cell_particles", "cell_count",
                      "cell_cursor", "cell_count:scan_sums", "gathered"}


@pytest.mark.parametrize("blend,allocation,one_pass", [("additive", "ordered", False),
                                                       ("alpha", "atomic", False),
                                                       ("alpha", "ordered", True)])
def test_emitter_buffers_match_what_the_engine_allocates(gpu, blend, allocation, one_pass):
    n = 300_001          # over 1024 blocks: the scan has two levels
    scene = loads_scene(f"""
[[entity]]
name = "fx"
[entity.emitter]
capacity = {n}
blend = "{blend}"
allocation = "{allocation}"
""", path="<test>")
    with Engine(scene, size=(32, 32), emitter_tuning=replace(DEFAULT, one_pass=one_pass)) as engine:
        real = registry_sizes(engine, "fx", "emitter", EMITTER_KEYS)
        ranks_pass = any(p.name == "fx:emitter:ranks" for p in engine.frame_passes())
        births = any(p.name == "fx:emitter:births" for p in engine.frame_passes())
        pool = engine.system_of("fx", "emitter").pools["fx"]
        in_update = one_pass and pool.sim.births_here[pool.variant]
    # a pool this size ranks in one workgroup, or steps in one pass where asked to, with a
    # births pass unless the update gives them (nothing acts on this one: it does)
    assert ranks_pass == (allocation == "ordered" and not one_pass)
    assert births == (one_pass and not in_update)
    assert in_update == one_pass
    assert real == capacity.emitter_buffers(n, blend, allocation, ranks_pass, one_pass)


def test_particle_life_buffers_match_what_the_engine_allocates(gpu):
    from emberfx.model.camera import Camera
    from emberfx.model.scene import EntitySpec, Scene, SceneSettings
    from emberfx.systems.particle_life.component import ParticleLife

    n = 5000
    scene = Scene(SceneSettings(seed=1), Camera(kind="orthographic"), [EntitySpec(
        "swarm", {"particle_life": ParticleLife(count=n, species=3, r_max=0.02,
                                                box=[1.0, 1.0])})])
    with Engine(scene, size=(32, 32)) as engine:
        real = registry_sizes(engine, "swarm", "particle_life", PARTICLE_LIFE_KEYS)
    # box / r_max = 50 cells a side: 2500, > 1024; the counts have one entry more (the dead cell's)
    cells = real["cell_count"] // 4 - 1
    modelled = capacity.particle_life_buffers(n, cells)
    # the registry sums particles0 + particles1 and ids0 + ids1 under one key each
    for pair in ("particles", "ids"):
        modelled[pair] = modelled.pop(f"{pair}0") + modelled.pop(f"{pair}1")
    assert cells == 2500 and real == modelled


def test_largest_entities_on_an_h200():
    rows = {r["what"]: r for r in capacity.largest()}
    # the H200's storage binding (2 GiB less 4 bytes) / 32 B per particle; / 1 bit per cell
    assert rows["emitter pool"]["one entity"] == ((2 << 30) - 4) // 32 == 67_108_863
    assert rows["particle-life swarm"]["one entity"] == 67_108_863
    assert rows["Life grid (pingpong)"]["one entity"] == ((2 << 30) - 4) * 8
    assert rows["Life grid (pingpong)"]["all memory holds"] == 139 * (1 << 30) * 4


def test_life_halo_bytes_by_hand():
    rows = capacity.life_halo(65536, 32768, (2, 4, 8), rate=15.3e12)
    for row, k in zip(rows, (2, 4, 8), strict=True):
        # two halo rows of 65536 bits each per GPU per generation
        assert row["bytes out per GPU per step"] == 2 * 65536 // 8 == 16384
        assert row["bytes per step, all links"] == k * 16384
        assert row["rows per GPU"] == 32768 // k
        generations = 15.3e12 * k / (65536 * 32768)
        assert row["GB/s out per GPU"] == pytest.approx(16384 * generations / 1e9, rel=1e-12)


def test_particle_life_domains_by_hand():
    n = 1 << 20
    rows = capacity.particle_life_domains(n, (4,), (0.01,), rate=1e9)
    (row,) = rows
    side = math.sqrt(n / 20)                  # box side in r_max at 20 per r_max^2
    ghosts = 2 * 20 * side                    # a strip r_max wide along both slab edges
    migrants = 20 * side * 0.01               # half of density * L * mean|v_x| per edge
    assert row["ghosts out per GPU per step"] == pytest.approx(ghosts, rel=1e-12)
    assert row["migrants out per GPU per step"] == pytest.approx(migrants, rel=1e-12)
    assert row["bytes out per GPU per step"] == pytest.approx(16 * ghosts + 36 * migrants)
    assert row["steps/s"] == pytest.approx(1e9 * 4 / n)


def test_the_page_shows_the_computed_tables():
    text = DOC.read_text(encoding="utf-8")
    for name, table in capacity.markdown_tables().items():
        assert table in text, f"docs/scaling.md: table {name} differs from bench/capacity.py"
