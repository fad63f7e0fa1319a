"""`emberfx web`: a scene recorded in the portable profile and replayed by a page in a real
browser (Debian's chromium, headless, WebGPU on its SwiftShader adapter, driven by playwright).

The oracle is the Python engine in the same profile (web/record.py's portable_engine): after K
steps the page's ``window.emberfx.state(name)`` must hold what ``engine.state(name)`` holds
(Life cells and the fountain's alive slots exactly, other alive counts within 1%, positions
within 1e-3 of the scene's extent) and the page's output texture must show what
``engine.render()`` shows. The page must make no network request.

The browser tests skip without chromium or playwright, and fail instead under
EMBERFX_REQUIRE_NOTEBOOK=1 (CI), as the notebook browser test does.
"""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from notebook_support import require, unavailable

ROOT = Path(__file__).resolve().parent.parent
SCENES = ROOT / "scenes"
STEPS = 60
SIZE = (160, 96)
# the WebGPU flags of Debian's chromium on a machine without a GPU (WGPU_NOTES); --no-sandbox:
# chromium's sandbox refuses to start as root (CI runs as root)
CHROMIUM_ARGS = ["--no-sandbox", "--enable-unsafe-webgpu",
                 "--enable-features=Vulkan,VulkanFromANGLE", "--use-angle=vulkan",
                 "--enable-unsafe-swiftshader"]


@pytest.fixture(scope="module")
def browser():
    require("playwright")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        unavailable("chromium is not installed (Debian: apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=chromium, headless=True,
                                          args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def open_page(browser, path: Path):
    """The page at ``path`` loaded, its requests listed, its player ready."""
    page = browser.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    ready = page.evaluate("window.emberfx.ready")
    assert ready is True, page.evaluate("window.emberfx.failed")
    return page, requests


def page_pixels(page) -> np.ndarray:
    h, w = SIZE[1], SIZE[0]
    data = base64.b64decode(page.evaluate("window.emberfx.pixels()"))
    return np.frombuffer(data, np.uint8).reshape(h, w, 4)


def oracle(scene_file: Path, steps: int = STEPS):
    from emberfx import load_scene
    from emberfx.web.record import portable_engine

    engine = portable_engine(load_scene(scene_file), SIZE)
    engine.step(steps)
    return engine


def write(tmp_path: Path, scene: str, frames: int = STEPS) -> Path:
    from emberfx import load_scene
    from emberfx.web import write_web

    return write_web(load_scene(SCENES / scene), tmp_path / f"{Path(scene).stem}.html",
                     frames, SIZE)


def trace_of(path: Path) -> dict:
    """The trace a page carries (web/page.py: gzip JSON in base64)."""
    import gzip
    import json

    text = path.read_text("utf-8")
    packed = re.search(r'<script id="emberfx-trace"[^>]*>([^<]*)</script>', text)
    assert packed is not None, "the page carries no trace"
    return json.loads(gzip.decompress(base64.b64decode(packed.group(1))))


def work_of(trace: dict, ops: list) -> dict:
    """Passes begun and bytes written by the host in ``ops``: the engine's work of a step."""
    def size(ref: dict) -> int:
        return len(base64.b64decode(trace["blobs"][ref["#"]]))

    passes = sum(op[2] in ("beginComputePass", "beginRenderPass") for op in ops)
    written = sum(size(op[3][2]) for op in ops if op[2] == "writeBuffer") + sum(
        size(op[3][1]) for op in ops if op[2] == "writeTexture")
    return {"passes": passes, "bytes": written}


def images_match(page_image: np.ndarray, engine_image: np.ndarray, background) -> None:
    """Same non-background mask (IoU >= 0.9) and a mean absolute difference under 8/255."""
    diff = np.abs(page_image[..., :3].astype(int) - engine_image[..., :3].astype(int))
    assert diff.mean() < 8.0, f"mean abs difference {diff.mean():.2f}/255"
    lit_page = np.abs(page_image[..., :3].astype(int) - background).max(-1) > 12
    lit_engine = np.abs(engine_image[..., :3].astype(int) - background).max(-1) > 12
    union = (lit_page | lit_engine).sum()
    assert union > 0, "nothing but background in either image"
    iou = (lit_page & lit_engine).sum() / union
    assert iou >= 0.9, f"IoU of the lit pixels {iou:.3f}"


def test_life_page_replays_the_engine_exactly(gpu, browser, tmp_path):
    path = write(tmp_path, "life.toml")
    page, requests = open_page(browser, path)
    assert page.evaluate(f"window.emberfx.run({STEPS})") == STEPS
    state = page.evaluate("window.emberfx.state('life')")
    assert page.evaluate("window.emberfx.errors") == []
    engine = oracle(SCENES / "life.toml")
    try:
        expected = engine.state("life")["cells"]
        cells = np.array(state["cells"], bool)
        assert cells.shape == expected.shape
        assert expected.sum() > 0 and np.array_equal(cells, expected)
        image = engine.render()
        background = image[0, 0, :3].astype(int)
        images_match(page_pixels(page), image, background)
    finally:
        engine.close()
    assert requests == [path.as_uri()], requests


def test_cloth_page_matches_the_engine_within_a_thousandth_of_the_extent(gpu, browser,
                                                                           tmp_path):
    """drape.toml: a sheet falling on a sphere onto the floor (cloth, two colliders, a lit
    mesh). (flag.toml's gusting flag is chaotic: a 1e-10 difference after one step grows to
    3e-3 by step 16 between any two drivers that round differently.)"""
    path = write(tmp_path, "drape.toml")
    page, requests = open_page(browser, path)
    page.evaluate(f"window.emberfx.run({STEPS})")
    state = page.evaluate("window.emberfx.state('sheet')")
    assert page.evaluate("window.emberfx.errors") == []
    engine = oracle(SCENES / "drape.toml")
    start = oracle(SCENES / "drape.toml", 0)
    try:
        expected = engine.state("sheet")["position"]
        moved = np.abs(expected - start.state("sheet")["position"]).max()
        extent = np.ptp(expected.reshape(-1, 3), axis=0).max()
        got = np.array(state["position"], np.float32)
        assert got.shape == expected.shape
        assert moved > 1e-2 * extent   # the cloth did move: a frozen replay fails
        assert np.abs(got - expected).max() <= 1e-3 * extent
        image = engine.render()
        images_match(page_pixels(page), image, image[0, 0, :3].astype(int))
    finally:
        engine.close()
        start.close()
    assert requests == [path.as_uri()], requests


def test_fountain_page_has_the_engines_alive_slots_and_positions(gpu, browser, tmp_path):
    path = write(tmp_path, "fountain.toml")
    page, requests = open_page(browser, path)
    page.evaluate(f"window.emberfx.run({STEPS})")
    state = page.evaluate("window.emberfx.state('fountain')")
    assert page.evaluate("window.emberfx.errors") == []
    engine = oracle(SCENES / "fountain.toml")
    try:
        expected = engine.state("fountain")
        alive = np.array(state["alive"], bool)
        assert expected["alive"].sum() > 1000 and np.array_equal(alive, expected["alive"])
        extent = np.ptp(expected["position"][alive], axis=0).max()
        got = np.array(state["position"], np.float32)[alive]
        assert np.abs(got - expected["position"][alive]).max() <= 1e-3 * extent
        image = engine.render()
        images_match(page_pixels(page), image, image[0, 0, :3].astype(int))
    finally:
        engine.close()
    assert requests == [path.as_uri()], requests
    # the page did the recorded engine's work of the last step: its passes and host writes
    trace = trace_of(path)
    last = trace["steps"][STEPS - 1] + trace["draws"][STEPS - 1]
    assert page.evaluate("window.emberfx.counts()") == work_of(trace, last) != {"passes": 0,
                                                                          "bytes": 0}


FIREWORKS_STEPS = 90   # the first shells burst (GPU events: on_death) between steps 70 and 90


def test_fireworks_page_replays_the_bursts_that_gpu_events_spawn(gpu, browser, tmp_path):
    path = write(tmp_path, "fireworks.toml", FIREWORKS_STEPS)
    page, _ = open_page(browser, path)
    page.evaluate(f"window.emberfx.run({FIREWORKS_STEPS})")
    engine = oracle(SCENES / "fireworks.toml", FIREWORKS_STEPS)
    try:
        for name in ("rockets", "gold", "teal", "sparkle"):
            state = page.evaluate(f"window.emberfx.state('{name}')")
            expected = engine.state(name)
            alive = np.array(state["alive"], bool)
            assert abs(int(alive.sum()) - int(expected["alive"].sum())) \
                <= 0.01 * expected["alive"].sum(), name
            both = alive & expected["alive"]
            if name in ("gold", "teal"):
                assert both.sum() >= 600, name   # a burst happened in both
            extent = max(np.ptp(expected["position"][expected["alive"]], axis=0).max(), 1.0)
            got = np.array(state["position"], np.float32)[both]
            assert np.abs(got - expected["position"][both]).max() <= 1e-3 * extent, name
        assert page.evaluate("window.emberfx.errors") == []
    finally:
        engine.close()


def test_run_goes_back_and_forth_to_the_same_state(gpu, browser, tmp_path):
    page, _ = open_page(browser, write(tmp_path, "life.toml", 12))
    page.evaluate("window.emberfx.run(12)")
    late = page.evaluate("window.emberfx.state('life')")
    page.evaluate("window.emberfx.run(3)")   # backwards: replays from the start
    early = page.evaluate("window.emberfx.state('life')")
    page.evaluate("window.emberfx.run(12)")
    assert page.evaluate("window.emberfx.state('life')") == late != early
    # a step of the other parity than the recording's last: Life's other buffer holds it
    engine = oracle(SCENES / "life.toml", 3)
    try:
        expected = engine.state("life")["cells"]
    finally:
        engine.close()
    assert np.array_equal(np.array(early["cells"], bool), expected)


def test_dragging_orbits_the_pages_own_camera_and_the_button_restores_the_scenes(
        gpu, browser, tmp_path):
    page, _ = open_page(browser, write(tmp_path, "drape.toml", 20))
    page.evaluate("window.emberfx.run(20)")
    page.wait_for_timeout(200)
    recorded = page_pixels(page)
    box = page.locator("#view").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 40, y + 10, steps=4)
    page.mouse.up()
    page.wait_for_timeout(300)
    turned = page_pixels(page)
    assert page.evaluate("window.emberfx.step") == 20   # paused: drawn again, not stepped
    assert np.abs(turned.astype(int) - recorded.astype(int)).mean() > 2.0
    page.click("#resetcam")
    page.wait_for_timeout(300)
    assert np.array_equal(page_pixels(page), recorded)
    assert page.evaluate("window.emberfx.errors") == []


def test_a_ten_second_fountain_page_is_under_two_megabytes(gpu, tmp_path):
    from emberfx import load_scene

    scene = load_scene(SCENES / "fountain.toml")
    frames = round(10.0 / scene.settings.fixed_dt)
    path = write(tmp_path, "fountain.toml", frames)
    assert 10_000 < path.stat().st_size < 2_000_000, path.stat().st_size


def test_a_scene_beyond_a_browsers_limits_is_refused_in_one_line(gpu, tmp_path):
    scene = tmp_path / "big.toml"   # 150 MB of Life state: WebGPU's default binding is 128 MiB
    scene.write_text('[scene]\nname = "Big"\n[camera]\nkind = "orthographic"\n'
                     '[[entity]]\nname = "life"\n[entity.life]\nsize = [40000, 30000]\n')
    out = tmp_path / "big.html"
    run = subprocess.run([sys.executable, "-m", "emberfx", "web", str(scene), "--out", str(out),
                          "--frames", "2"], capture_output=True, text=True)
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "big.toml" in lines[0] and "browser" in lines[0], lines
    assert "134,217,728" in lines[0]
    assert not out.exists()


def test_two_recordings_give_the_same_trace(gpu):
    """Ids are stable (not Python's id()) and a recording's readbacks are settled (each step
    copies its counters into the same free ring slot, however fast the GPU returned the last
    one): the same scene records the same calls, the counters' copies included."""
    from emberfx import load_scene
    from emberfx.web.record import record

    first, second = (record(load_scene(SCENES / "life.toml"), 4, SIZE) for _ in range(2))
    for key in ("setup", "steps", "draws", "blobs", "states"):
        assert first[key] == second[key], key
    assert any(op[2] == "copyBufferToBuffer" for op in first["steps"][1])   # the readback
    # per-step ids restart: two steps make the same calls on the same objects
    assert [op[:3] for op in first["steps"][2]] == [op[:3] for op in first["steps"][3]]


def entry_shaders() -> list[str]:
    names = []
    for path in sorted((ROOT / "shaders").rglob("*.wgsl")):
        text = path.read_text("utf-8")
        if any(stage in text for stage in ("@compute", "@vertex", "@fragment")):
            names.append(path.relative_to(ROOT / "shaders").as_posix())
    return names


def test_every_shipped_shader_compiles_in_chromiums_webgpu(browser, tmp_path):
    """Each shader with an entry point, with its includes expanded as the engine composes it,
    gives no error from createShaderModule's compilation info. A shader using subgroups gets
    ``enable subgroups;`` as the page gives it (web/trace.py) and a device with subgroups."""
    from emberfx.core import wgsl
    from emberfx.web.trace import browser_wgsl

    sources: dict[str, str | None] = {}
    for name in entry_shaders():
        try:
            sources[name] = browser_wgsl(wgsl.load(name).code)
        except Exception as exc:   # a shader made only from placeholders the engine fills
            sources[name] = None
            print(f"{name}: not loadable alone ({exc})")
    blank = tmp_path / "blank.html"   # a file: page is a secure context (about:blank is not)
    blank.write_text("<!doctype html><title>shaders</title>", "utf-8")
    page = browser.new_page()
    page.goto(blank.as_uri())
    errors = page.evaluate("""async (sources) => {
        const adapter = await navigator.gpu.requestAdapter();
        const features = adapter.features.has('subgroups') ? ['subgroups'] : [];
        const device = await adapter.requestDevice({requiredFeatures: features});
        const out = {};
        for (const [name, code] of Object.entries(sources)) {
            if (code === null) continue;
            const module = device.createShaderModule({code});
            const info = await module.getCompilationInfo();
            const bad = info.messages.filter(m => m.type === 'error');
            if (bad.length) out[name] = bad[0].lineNum + ': ' + bad[0].message;
        }
        return out;
    }""", sources)
    assert sum(code is not None for code in sources.values()) > 50
    assert errors == {}, "\n".join(f"{k}: {v}" for k, v in errors.items())


def test_the_notebook_player_plays_inside_its_cell(gpu, browser, tmp_path):
    """engine.web() and emberfx.show(engine, client=True) give an HTML display whose iframe
    holds the page; here it is the output of a cell in a page of its own."""
    require("IPython")
    import emberfx
    from emberfx import load_scene

    with emberfx.Engine(load_scene(SCENES / "life.toml"), size=SIZE) as engine:
        display = engine.web(frames=12)
        shown = emberfx.show(engine, client=True, frames=12)
    assert display.data == shown.data and "<iframe srcdoc=" in display.data
    host = tmp_path / "cell.html"
    host.write_text(f"<!doctype html><title>cell</title><div>{display.data}</div>", "utf-8")
    page = browser.new_page()
    page.goto(host.as_uri())
    page.wait_for_function("() => window.frames.length === 1 && !!window.frames[0].emberfx")
    player = page.frames[1]
    assert player.evaluate("window.emberfx.ready") is True, player.evaluate("window.emberfx.failed")
    assert player.evaluate("window.emberfx.run(12)") == 12
    cells = np.array(player.evaluate("window.emberfx.state('life')")["cells"], bool)
    engine = oracle(SCENES / "life.toml", 12)
    try:
        assert np.array_equal(cells, engine.state("life")["cells"])
    finally:
        engine.close()


# ---------------------------------------------------------------- the gallery's live players

# what would make a page fetch something: a URL with a scheme or a host, or an attribute that
# loads a file (data: URLs are inline)
EXTERNAL = re.compile(r"\b[a-z][a-z0-9+.-]*://|(?:src|href|action|poster)\s*=\s*(?![\"']?data:)"
                      r"|url\(\s*(?![\"']?data:)|@import", re.IGNORECASE)


def test_the_gallery_players_are_written_for_the_listed_scenes_self_contained(
        gpu, tmp_path, monkeypatch):
    """write_players (what the docs build's hook records) writes one page per scene of
    ``PLAYERS``, each carrying its trace and poster and nothing to fetch. Two steps each here
    (the build records more): the pages' make-up does not depend on the count."""
    from emberfx.app.gallery import NO_PLAYER, PLAYERS, player_uri
    from emberfx.app.gallery_players import write_players

    assert len(PLAYERS) >= 6 and not set(PLAYERS) & set(NO_PLAYER)
    for name in PLAYERS:
        monkeypatch.setitem(PLAYERS, name, 2)
    written = write_players(tmp_path, record=True)
    assert sorted(written) == sorted(tmp_path / player_uri(name) for name in PLAYERS)
    for path in written:
        text = path.read_text("utf-8")
        found = EXTERNAL.findall(text)
        assert found == [], f"{path.name} could fetch: {found[:3]}"
        assert "default-src 'none'" in text and 'src="data:image/png;base64,' in text
        trace = trace_of(path)
        assert trace["frames"] == 2 and len(trace["steps"]) == 2, path.name
        assert trace["scene"] and trace["setup"], path.name


def test_a_gallery_player_opens_on_click_and_replays_in_chromium(gpu, browser, tmp_path):
    """The gallery's link to Life's player (as the site renders it), docs/javascripts/gallery.js
    and the player served as the site serves them: a click opens the player in an iframe, which
    replays the engine's steps exactly and fetches nothing beyond the site."""
    import functools
    import html
    import http.server
    import threading

    from emberfx import load_scene
    from emberfx.app.gallery import PLAYERS, gallery_size, player_line
    from emberfx.app.gallery_players import write_players
    from emberfx.web.record import portable_engine

    write_players(tmp_path, ["life"], record=True)
    # the page's state reads are the ones recorded after the last step: Life's ping-pong
    # buffers are read right at steps of that parity, so the check runs the whole loop
    steps = PLAYERS["life"]
    line = player_line("life", load_scene(SCENES / "life.toml"))
    link = re.fullmatch(r'\[([^\]]+)\]\(([^)]+)\)\{ \.emberfx-play data-width="(\d+)" '
                        r'data-height="(\d+)" \}', line)
    assert link is not None, line
    text, uri, width, height = link.groups()
    script = (ROOT / "docs" / "javascripts" / "gallery.js").read_text("utf-8")
    (tmp_path / "gallery.html").write_text(
        f'<!doctype html><title>gallery</title><p><a class="emberfx-play" href="{uri}" '
        f'data-width="{width}" data-height="{height}">{html.escape(text)}</a></p>'
        f"<script>{script}</script>", "utf-8")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    site = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        page = browser.new_page()
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(site + "gallery.html")
        assert page.locator("iframe").count() == 0   # nothing loaded until asked
        page.click("a.emberfx-play")
        page.wait_for_function("() => window.frames.length === 1 && !!window.frames[0].emberfx")
        frame = page.locator("iframe")
        assert frame.get_attribute("width") == width and frame.get_attribute("src") == site + uri
        player = page.frames[1]
        assert player.evaluate("window.emberfx.ready") is True, \
            player.evaluate("window.emberfx.failed")
        assert player.evaluate(f"window.emberfx.run({steps})") == steps
        cells = np.array(player.evaluate("window.emberfx.state('life')")["cells"], bool)
        assert player.evaluate("window.emberfx.errors") == []
        page.click("a.emberfx-play")   # a second click closes it
        assert page.locator("iframe").count() == 0
    finally:
        server.shutdown()
        server.server_close()
    engine = portable_engine(load_scene(SCENES / "life.toml"), gallery_size(
        load_scene(SCENES / "life.toml")))
    try:
        engine.step(steps)
        expected = engine.state("life")["cells"]
        assert expected.sum() > 0 and np.array_equal(cells, expected)
    finally:
        engine.close()
    assert requests == [site + "gallery.html", site + uri], requests


FLOCK = """
[scene]
seed = 3
[camera]
kind = "orthographic"
height = 5.0
[[entity]]
name = "flock"
[entity.emitter]
capacity = 300
rate = 0
bursts = [{ time = 0.0, count = 300 }]
lifetime = 1000
speed = 1.0
spread_deg = 180
gravity = [0, 0, 0]
shape = { kind = "box", size = [4, 4, 4] }
boids = { radius = 0.6, bounds = { center = [0, 0, 0], half_size = [2, 2, 2], wrap = true } }
"""


def test_flock_page_replays_the_neighbour_grid_and_boids(gpu, browser, tmp_path):
    """Boids read a neighbour grid that the step builds (emitter/neighbours_feature.py): the
    page's flock after 12 steps is the engine's. A flock is chaotic (a boid near a rule's
    radius turns one way or the other on a rounding), so: 95% within 1e-3 of a box of edge 4,
    the median within 1e-4, and none off by more than 0.05."""
    from emberfx import load_scene
    from emberfx.web import write_web

    scene_file = tmp_path / "flock.toml"
    scene_file.write_text(FLOCK, "utf-8")
    path = write_web(load_scene(scene_file), tmp_path / "flock.html", 12, SIZE)
    page, _ = open_page(browser, path)
    page.evaluate("window.emberfx.run(12)")
    assert page.evaluate("window.emberfx.errors") == []
    state = page.evaluate("window.emberfx.state('flock')")
    engine = oracle(scene_file, 12)
    try:
        expected = engine.state("flock")
        alive = np.array(state["alive"], bool)
        assert alive.sum() == 300 and np.array_equal(alive, expected["alive"])
        got = np.array(state["position"], np.float32)[alive]
        error = np.abs(got - expected["position"][alive]).max(1)
        assert np.percentile(error, 95) <= 1e-3 and np.median(error) <= 1e-4, error
        assert error.max() <= 0.05
    finally:
        engine.close()
