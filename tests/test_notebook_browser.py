"""docs/emberfx.ipynb in a real browser: JupyterLab served on localhost, the system's chromium
driven by playwright, every cell run from the Lab's own "run all" command.

Checked through the browser: the canvas shows a frame of the scene; Space (keys go to the
canvas once it is clicked) pauses it, so its frames stop changing; a quick drag on it orbits the
camera, which the next frame shows. Checked through the notebook's kernel (a code request the
page sends, as a cell would): the view is paused, and the camera turned around its target at
a constant distance and rose (dragging down raises the camera, as in Blender), and no frame
failed.

Skipped when chromium, the notebook extra or the browser extra is missing; under
EMBERFX_REQUIRE_NOTEBOOK=1 (CI) that fails instead (tests/notebook_support.py).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest
from notebook_support import NOTEBOOK, decode_image, lit_fraction, require, unavailable

CHROMIUM = ("chromium", "chromium-browser")
SERVER_START_SECONDS = 90.0
FRAME_SECONDS = 60.0     # for the canvas's first frame after the run (shader compiles)
SETTLE_SECONDS = 0.7     # longer than jupyter_rfb's 0.3 s lossless re-send of a still frame
DRAG_PIXELS = 60

# JavaScript run in the page. The Lab exposes its application object with
# expose_app_in_browser; the notebook is its current main-area widget.
NOTEBOOK_PANEL = "window.jupyterapp && window.jupyterapp.shell.currentWidget"
KERNEL_READY = f"""() => {{
    const panel = {NOTEBOOK_PANEL};
    const kernel = panel && panel.sessionContext && panel.sessionContext.session
        && panel.sessionContext.session.kernel;
    return !!kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}}"""
ALL_CELLS_RAN = f"""() => {{
    const panel = {NOTEBOOK_PANEL};
    const kernel = panel.sessionContext.session.kernel;
    const cells = panel.content.widgets.filter(cell => cell.model.type === 'code');
    return kernel.status === 'idle' && cells.every(cell => cell.model.executionCount !== null);
}}"""
RUN_IN_KERNEL = f"""async (code) => {{
    const kernel = {NOTEBOOK_PANEL}.sessionContext.session.kernel;
    const future = kernel.requestExecute({{code, store_history: false}});
    let text = '';
    future.onIOPub = (msg) => {{
        if (msg.header.msg_type === 'stream') text += msg.content.text;
        if (msg.header.msg_type === 'error') text += 'ERROR ' + msg.content.evalue;
    }};
    await future.done;
    return text;
}}"""
CELL_ERRORS = f"""() => {NOTEBOOK_PANEL}.content.widgets
    .filter(cell => cell.model.type === 'code')
    .flatMap(cell => cell.model.outputs.toJSON())
    .filter(output => output.output_type === 'error')
    .map(output => output.ename + ': ' + output.evalue)"""


def find_chromium() -> str:
    for name in CHROMIUM:
        path = shutil.which(name)
        if path:
            return path
    unavailable("chromium is not installed (Debian: apt-get install chromium)")
    raise AssertionError("unreachable")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(gpu, tmp_path):
    """A JupyterLab on 127.0.0.1 serving a copy of the example notebook; yields its URL."""
    require("jupyterlab", "playwright", "jupyter_rfb", "ipykernel", "matplotlib")
    shutil.copy(NOTEBOOK, tmp_path / NOTEBOOK.name)
    port, token = free_port(), secrets.token_hex(16)
    home = tmp_path / "jupyter"   # no user settings or saved workspaces change the layout
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"),
               JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"))
    log = (tmp_path / "lab.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}",
         "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
         "--ServerApp.allow_root=True"],   # CI runs as root
        cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + SERVER_START_SECONDS
        while True:
            assert server.poll() is None, (tmp_path / "lab.log").read_text()[-3000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}",
                                            timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "JupyterLab did not start"
            time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK.name}?token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def canvas_image(view) -> np.ndarray:
    return decode_image(view.screenshot())


def wait_for(condition, seconds: float, what: str, poll: float = 0.2):
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value is not None and value is not False:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(poll)


def difference(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.int32) - b.astype(np.int32)).mean())


def camera(page) -> dict:
    text = page.evaluate(RUN_IN_KERNEL, "import json; print(json.dumps({'position': "
                         "list(engine.camera.position), 'target': list(engine.camera.target), "
                         "'paused': view.paused, 'problem': view.runner.problem, "
                         "'error': repr(view.runner.error)}))")
    assert not text.startswith("ERROR"), text
    return json.loads(text)


def test_canvas_shows_the_scene_pauses_and_orbits(lab):
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    with sync_playwright() as driver:
        # --no-sandbox: chromium's sandbox refuses to start as root (CI runs as root)
        browser = driver.chromium.launch(executable_path=chromium, headless=True,
                                         args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1400})
            page.goto(lab, wait_until="domcontentloaded", timeout=60_000)
            page.wait_for_function(KERNEL_READY, timeout=90_000, polling=250)
            page.evaluate("() => window.jupyterapp.commands.execute("
                          "'notebook:run-all-cells')")
            page.wait_for_function(ALL_CELLS_RAN, timeout=180_000, polling=250)
            assert page.evaluate(CELL_ERRORS) == []

            view = page.locator("img.renderview-view").first
            view.scroll_into_view_if_needed()
            first = wait_for(lambda: (lambda image: image if lit_fraction(image) > 0.01
                                      else None)(canvas_image(view)),
                             FRAME_SECONDS, "a lit frame on the canvas")
            box = view.bounding_box()
            assert box is not None
            assert first.shape[1] >= 0.9 * box["width"]   # the screenshot is the canvas

            # Space pauses: the canvas then shows the same frame over and over
            start = camera(page)
            assert start["paused"] is False
            view.click()                 # gives the canvas the keyboard (a click orbits by 0)
            page.keyboard.press(" ")
            wait_for(lambda: camera(page)["paused"], 10, "Space to pause the scene")
            time.sleep(SETTLE_SECONDS)
            before = canvas_image(view)
            time.sleep(SETTLE_SECONDS)
            assert difference(canvas_image(view), before) < 0.5, "paused, yet frames change"
            assert camera(page)["position"] == start["position"]   # the click did not orbit

            # a drag down orbits the camera up; the next frames show it. A quick one: jupyter_rfb
            # holds a move up to 20 ms but sends the release at once, so the kernel most often
            # hears the release before the move (runtime/app/interaction.py: Pointer.up)
            x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            page.mouse.move(x, y)
            page.mouse.down()
            page.mouse.move(x, y + DRAG_PIXELS)
            page.mouse.up()
            wait_for(lambda: difference(canvas_image(view), before) > 2.0, 20,
                     "the drag to change the frame")
            time.sleep(SETTLE_SECONDS)
            after = canvas_image(view)
            assert lit_fraction(after) > 0.01
            moved = camera(page)
        finally:
            browser.close()

    # no frame failed (an Engine call from a thread other than its own, ...)
    assert (moved["problem"], moved["error"]) == (None, "None")
    assert moved["paused"] is True   # the change is the camera's, not the simulation's
    old = np.subtract(start["position"], start["target"])
    new = np.subtract(moved["position"], moved["target"])
    assert moved["target"] == start["target"]
    assert np.linalg.norm(new) == pytest.approx(np.linalg.norm(old), rel=1e-6)   # an orbit
    assert new[1] > old[1] + 0.1   # dragged down: the camera rose
