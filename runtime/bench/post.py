"""``emberfx bench post``: milliseconds per 1920x1080 frame for each post pass alone, and the
naive global-memory Sobel (post/edge_detect_naive.wgsl) beside the tiled one."""

from __future__ import annotations

from emberfx.bench.harness import timed_passes

POST_SCENE = """
[[entity]]
name = "post"
[entity.bloom]
[entity.edge_detect]
[entity.tonemap]
"""


def bench_post() -> list[dict]:
    from emberfx.core.gpu import get_context
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import loads_scene

    ctx = get_context()
    engine = Engine(loads_scene(POST_SCENE, path="<bench>"), size=(1920, 1080))
    engine.render()
    rows = []
    iterations = 3 if ctx.is_software else 50
    post = [p for p in engine.frame_passes() if ":post:" in p.name]
    for p in post:
        # wall clock around one submission of many: lavapipe's timestamps came back far too
        # small around these texture passes (0.07 ms for what takes 30 ms)
        seconds = timed_passes(ctx.device, [p], iterations, timestamps=False)
        rows.append({"name": f"post pass {p.name.split(':post:')[-1]}, 1920x1080",
                     "value": seconds * 1e3, "unit": "ms"})
        if p.name.endswith(":post:edge_detect"):
            naive, scratch = naive_edge_pass(ctx, engine, p)
            seconds = timed_passes(ctx.device, [naive], iterations, timestamps=False)
            scratch.release_all()
            rows.append({"name": "post pass edge_detect, naive global loads (reference)",
                         "value": seconds * 1e3, "unit": "ms"})
    engine.close()
    return rows


def naive_edge_pass(ctx, engine, tiled):
    """post/edge_detect_naive.wgsl as a pass like ``tiled`` (the engine's edge_detect pass):
    the same settings, grid and texture sizes and formats, on textures of its own. A Sobel's
    cost does not depend on the pixels (the bench scene's are one background colour anyway).
    Returns the pass and the registry holding its textures (the caller releases them)."""
    import wgpu

    from emberfx.core.bindings import PassBuilder
    from emberfx.core.resources import Resources
    from emberfx.core.system import SCENE_FORMAT
    from emberfx.systems.post.system import HDR, edge_settings

    w, h = engine.size
    scratch = Resources(ctx)   # the baseline's own textures, outside the Engine's registry
    source = scratch.texture("bench", "source", size=(w, h), format=SCENE_FORMAT,
                             usage=wgpu.TextureUsage.TEXTURE_BINDING)
    edges = scratch.texture("bench", "edges", size=(w, h), format=HDR,
                            usage=wgpu.TextureUsage.STORAGE_BINDING)
    data = edge_settings(engine.components_of("post")["edge_detect"])
    settings = scratch.buffer("bench", "settings", len(data),
                              wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
    scratch.write(settings, data)
    naive = PassBuilder(ctx, scratch).compute(
        "bench:naive", tiled.phase, "post/edge_detect_naive.wgsl", tiled.op.groups,
        {"settings": settings, "source": source, "output_image": edges})
    return naive, scratch
