"""``emberfx bench cloth``: vertex-substeps per second of the explicit cloth step (12 springs per
vertex, 16 substeps per step, top edge pinned), beside the compute-copy roofline and the same
model in Taichi when it is installed; then what a frame costs with 1, 10 and 100 patches of
64 x 64, batched (patches of one shape share one dispatch per substep:
systems/cloth/batches.py) and, in the same run, alone (``Engine(batching=False)``), the
baseline: CPU milliseconds per frame (the median frame's Python time without its submits, as
``bench many`` measures it), GPU milliseconds per frame and passes per frame."""

from __future__ import annotations

from emberfx.bench.harness import copy_row, timed, timed_passes

MANY_COUNTS = (1, 10, 100)
MANY_SIDE = 64
MANY_SIZE = (640, 360)


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
    return rows + resident_rows(ctx) + many_rows(ctx)


RESIDENT_SHAPES = ((16, 16), (32, 20), (32, 32), (48, 48))   # (32, 20): the showcase's flag


def resident_rows(ctx, shapes=RESIDENT_SHAPES) -> list[dict]:
    """Small patches, 20 substeps: ms of GPU per step with every substep in one dispatch of a
    workgroup (cloth/step_resident.wgsl) and, in the same run, with a dispatch per substep
    (cloth/step.wgsl), whatever the default ``ClothTuning`` picks for the shape."""
    from emberfx.core.frame_graph import Phase
    from emberfx.engine.engine import Engine
    from emberfx.model.camera import Camera
    from emberfx.model.scene import EntitySpec, Scene, SceneSettings
    from emberfx.systems.cloth.component import Cloth
    from emberfx.systems.cloth.tuning import DEFAULT, ClothTuning

    rows = []
    limit = DEFAULT.resident_limit(ctx)
    for nx, ny in shapes:
        ms = {}
        for resident in (True, False):
            tuning = ClothTuning(resident_up_to_vertices=nx * ny if resident else 0)
            engine = Engine(Scene(SceneSettings(seed=1), Camera(kind="orthographic"), [
                EntitySpec("cloth", {"cloth": Cloth(resolution=(nx, ny), pins="top-edge",
                                                    substeps=20)})]), size=(64, 64),
                            cloth_tuning=tuning)
            engine.step(2)
            ms[resident] = timed_passes(ctx.device, engine.frame_passes({Phase.SIMULATE}),
                                        2 if ctx.is_software else 50) * 1e3
            engine.close()
        rows.append({"name": f"cloth {nx}x{ny}, 20 substeps, one dispatch a step",
                     "value": ms[True], "unit": "ms/step", "vs_dispatch_per_substep":
                     ms[False] / ms[True], "taken": nx * ny <= limit})
        rows.append({"name": f"  cloth {nx}x{ny}, 20 substeps, a dispatch per substep",
                     "value": ms[False], "unit": "ms/step", "taken": nx * ny > limit})
    return rows


def many_rows(ctx, counts=MANY_COUNTS, side: int = MANY_SIDE) -> list[dict]:
    """Per patch count, batched and alone: CPU ms, GPU ms and passes per frame; the batched
    rows carry ``vs_alone`` (the alone figure over the batched one)."""
    rows: list[dict] = []
    units = {"cpu_ms": "ms/frame CPU (no submit)", "gpu_ms": "ms/frame GPU",
             "passes": "passes/frame"}
    for count in counts:
        alone = measure_patches(ctx, count, side, batching=False)
        batched = measure_patches(ctx, count, side, batching=True)
        for measured, batching in ((batched, True), (alone, False)):
            label = (f"{count} cloth patch{'es' if count > 1 else ''} {side}x{side}"
                     + ("" if batching else " alone"))
            for key, name in (("cpu_ms", f"{label}, step + render, CPU"),
                              ("gpu_ms", f"  {label}, GPU"), ("passes", f"  {label}, passes")):
                row = {"name": name, "value": measured[key], "unit": units[key],
                       "patches": count, "batching": batching}
                if batching and measured[key]:
                    row["vs_alone"] = alone[key] / measured[key]
                rows.append(row)
    return rows


def many_patches_scene(count: int, side: int):
    """``count`` patches of side x side vertices on a grid, top edge pinned, 16 substeps, the
    stiffness varying from patch to patch (records differ; the shape, so the batch, does not)."""
    from emberfx.model.camera import Camera
    from emberfx.model.scene import EntitySpec, Scene, SceneSettings
    from emberfx.systems.cloth.component import Cloth

    columns = max(1, round(count ** 0.5))
    entities = [EntitySpec(f"patch{k}", {"cloth": Cloth(
        resolution=(side, side), size=(0.8, 0.8), pins="top-edge", substeps=16,
        stiffness=1000.0 + 5.0 * k,
        position=((k % columns - columns / 2) * 1.0, (k // columns) * 1.0, 0.0))})
        for k in range(count)]
    rows = -(-count // columns)
    camera = Camera(kind="orthographic", center=(-0.1, rows / 2 - 0.5),
                    height=max(rows, columns * MANY_SIZE[1] / MANY_SIZE[0]) + 1.0)
    return Scene(SceneSettings(seed=1, size=MANY_SIZE), camera, entities)


def measure_patches(ctx, count: int, side: int, batching: bool) -> dict:
    from emberfx.bench.frame import measure_frames
    from emberfx.bench.harness import output_texture
    from emberfx.core.frame_graph import Phase
    from emberfx.engine.engine import Engine

    with Engine(many_patches_scene(count, side), size=MANY_SIZE, batching=batching) as engine:
        engine.step(2)
        passes = len([p for p in engine.frame_passes() if p.phase != Phase.READBACK])
        # a software adapter runs 100 patches at about a frame a second: few frames there
        frames = 5 if ctx.is_software and count >= 100 else (20 if count >= 100 else 40)
        frame = measure_frames(engine, pipelined=not ctx.is_software, frames=frames,
                               warmup=min(10, frames))
        output = output_texture(engine)
        try:
            seconds = timed(ctx.device, lambda enc: engine.encode(enc, output),
                            1 if ctx.is_software else 10, timestamps=not ctx.is_software)
        finally:
            output.destroy()
    return {"cpu_ms": frame["python"], "gpu_ms": seconds * 1e3, "passes": passes}


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
