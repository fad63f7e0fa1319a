"""``emberfx bench cloth``: vertex-substeps per second of the explicit cloth step (12 springs per
vertex, 16 substeps per step, top edge pinned), beside the compute-copy roofline and the same
model in Taichi when it is installed."""

from __future__ import annotations

from emberfx.bench.harness import copy_row, timed_passes


def bench_cloth() -> list[dict]:
    from emberfx.core.frame_graph import Phase
    from emberfx.core.gpu import get_context
    from emberfx.engine.engine import Engine
    from emberfx.model.camera import Camera
    from emberfx.model.scene import EntitySpec, Scene, SceneSettings
    from emberfx.systems.cloth.component import Cloth

    ctx = get_context()
    copy, bandwidth = copy_row(ctx)
    rows = [copy]
    sizes = (64, 256) if ctx.is_software else (64, 256, 1024)
    for side in sizes:
        scene = Scene(SceneSettings(seed=1), Camera(kind="orthographic"), [EntitySpec(
            "cloth", {"cloth": Cloth(resolution=(side, side), size=(2.0, 2.0), pins="top-edge",
                                     substeps=16)})])
        engine = Engine(scene, size=(64, 64))
        engine.step(2)
        iterations = 2 if ctx.is_software else 20
        seconds = timed_passes(ctx.device, engine.frame_passes({Phase.SIMULATE}), iterations)
        rate = side * side * 16 / seconds
        rows.append({"name": f"cloth {side}x{side}, 16 substeps", "value": rate / 1e6,
                     "unit": "M vertex-substeps/s", "ms_per_step": seconds * 1e3,
                     # a substep reads 2 x 16 B of its own state + neighbours (cached), writes 32 B
                     "fraction_of_copy_bandwidth": 64 * side * side * 16 / seconds / bandwidth})
        engine.close()
        rows += taichi_rows(side, rate)
    return rows


def taichi_rows(side: int, emberfx_rate: float) -> list[dict]:
    """The same model in Taichi, when Taichi is installed (it is not a dependency)."""
    import importlib.util

    if importlib.util.find_spec("taichi") is None:
        return []
    from emberfx.bench.taichi import taichi_cloth_rate

    rows: list[dict] = []
    for arch in ("cpu", "vulkan", "cuda"):
        try:
            rate = taichi_cloth_rate(side, arch)
        except Exception as exc:   # that backend is not available here
            rows.append({"name": f"  taichi {arch}, {side}x{side}", "value": None,
                         "unit": "unavailable", "note": str(exc).splitlines()[0][:80]})
            continue
        rows.append({"name": f"  taichi {arch}, {side}x{side}", "value": rate / 1e6,
                     "unit": "M vertex-substeps/s", "emberfx_vs_taichi": emberfx_rate / rate})
    return rows
