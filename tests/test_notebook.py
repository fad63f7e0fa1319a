"""The example notebook, docs/emberfx.ipynb, executed headless (nbclient + ipykernel), the
``<!-- notebook -->`` blocks of README.md and docs/ run as notebooks (tests/snippet_support.py),
and the notebook API in process: Engine._repr_png_, Engine.video, emberfx.show's errors, and that
``import emberfx`` loads none of the notebook packages.

The executed notebook's outputs are checked against oracles that do not come from emberfx: the
scene file read with tomllib, and the fountain's emission arithmetic (no particle dies before its
minimum lifetime, so the alive count is the rate times the time stepped).
"""

from __future__ import annotations

import ast
import base64
import json
import math
import re
import subprocess
import sys
import tomllib

import numpy as np
import pytest
from notebook_support import (
    NOTEBOOK,
    ROOT,
    data_of,
    data_uri_bytes,
    decode_image,
    lit_fraction,
    outputs,
    require,
)
from snippet_support import Block, clone_folder, notebook_pages

FOUNTAIN = ROOT / "scenes" / "fountain.toml"


def cell_source(notebook, tag: str) -> str:
    cells = [c for c in notebook.cells if tag in c.metadata.get("tags", [])]
    assert len(cells) == 1
    return cells[0].source


def number_in(notebook, tag: str, pattern: str) -> float:
    match = re.search(pattern, cell_source(notebook, tag))
    assert match is not None, f"cell {tag!r} no longer matches {pattern!r}"
    return float(match.group(1))


@pytest.fixture(scope="module")
def executed(gpu, tmp_path_factory):
    """docs/emberfx.ipynb run top to bottom in a fresh kernel (any cell error fails here)."""
    require("nbclient", "nbformat", "ipykernel", "jupyter_rfb", "matplotlib")
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    for cell in notebook.cells:
        assert cell.get("outputs", []) == [], "docs/emberfx.ipynb is committed with outputs"
    folder = tmp_path_factory.mktemp("notebook")
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    return notebook


def test_no_cell_printed_an_error(executed):
    for cell in executed.cells:
        for output in cell.get("outputs", []):
            assert output["output_type"] != "error", output
            assert output.get("name") != "stderr", output.get("text")


def test_state_matches_the_emission_oracle(executed):
    settings = tomllib.loads(FOUNTAIN.read_text())
    dt = settings["scene"]["fixed_dt"]
    emitter = settings["entity"][0]["emitter"]
    rate = number_in(executed, "edit", r"emitter\.rate = ([0-9.]+)")
    steps = int(number_in(executed, "state", r"engine\.step\((\d+)\)"))
    assert steps * dt < emitter["lifetime"][0], "the oracle needs every particle still alive"

    (text,) = data_of(executed, "state", "text/plain")
    state = ast.literal_eval(text)
    assert state["slots"] == emitter["capacity"]
    assert state["position"] == (emitter["capacity"], 3)
    assert state["alive"] == math.floor(rate * steps * dt + 1e-6)
    # born during the first step, aged by each later one (3 decimals printed)
    assert (steps - 1) * dt - 1e-3 <= state["oldest"] <= steps * dt + 1e-3
    # between the nozzle and the top of a vertical throw at the highest speed
    top = emitter["position"][1] + emitter["speed"][1] ** 2 / (2 * 9.81)
    assert emitter["position"][1] < state["mean_height"] < top


def test_matplotlib_plot_is_an_image(executed):
    (png,) = data_of(executed, "plot", "image/png")
    image = decode_image(base64.b64decode(png))
    assert image.shape[0] > 100 and image.shape[1] > 300
    assert image.std() > 10   # axes, labels and points on white, not an empty figure


def expected_size(notebook) -> tuple[int, int]:
    match = re.search(r"size=\((\d+), (\d+)\)", cell_source(notebook, "load"))
    assert match is not None
    return int(match.group(1)), int(match.group(2))


def assert_blue_fountain(rgb: np.ndarray, size: tuple[int, int]) -> None:
    """The frame at ``size`` shows particles in the blue colours the notebook set."""
    assert (rgb.shape[1], rgb.shape[0]) == size
    assert lit_fraction(rgb) > 0.01
    lit = rgb[lit_mask(rgb)].astype(np.float64)
    assert lit[:, 2].mean() > lit[:, 0].mean() + 30   # the edit of `color` reached the GPU


def lit_mask(rgb: np.ndarray) -> np.ndarray:
    return (rgb.astype(np.int32) - [0x10, 0x10, 0x14]).max(axis=2) > 40


def test_engine_displays_as_its_frame(executed):
    (png,) = data_of(executed, "frame", "image/png")
    assert_blue_fountain(decode_image(base64.b64decode(png)), expected_size(executed))


def test_video_is_an_inline_mp4_with_every_frame(executed, tmp_path):
    from emberfx.app.video import count_frames

    (html,) = data_of(executed, "video", "text/html")
    assert "<video" in html and "video/mp4" in html
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(data_uri_bytes(html, "video"))
    frames = int(number_in(executed, "video", r"frames=(\d+)"))
    assert count_frames(clip) == (frames, "")


def test_canvas_is_a_widget_with_a_snapshot_of_the_scene(executed):
    shown = [o["data"] for o in outputs(executed, "canvas")
             if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    # the canvas carries a snapshot of its first frame; jupyter_rfb's output area does not
    canvases = [d for d in shown if "text/html" in d]
    assert len(shown) == 2 and len(canvases) == 1, "show() displays its canvas once"
    canvas = canvases[0]
    assert re.fullmatch(r"[0-9a-f]{32}",
                        canvas["application/vnd.jupyter.widget-view+json"]["model_id"])
    snapshot = decode_image(data_uri_bytes(canvas["text/html"], "image"))
    assert_blue_fountain(snapshot, expected_size(executed))
    # the live-edit cell reads the view's state: running, not paused
    assert data_of(executed, "live-edit", "text/plain") == ["False"]


# ------------------------------------------------------------------------- notebook blocks

NOTEBOOK_PAGES = notebook_pages()


@pytest.mark.parametrize("cells", list(NOTEBOOK_PAGES.values()),
                         ids=[blocks[0].id.split(":")[0] for blocks in NOTEBOOK_PAGES.values()])
def test_notebook_blocks_of_a_page_run_as_one_notebook(cells: list[Block], gpu, tmp_path):
    """A page's notebook blocks, in order, are the cells of one notebook, run in a fresh kernel
    in a folder that looks like a clone (scenes/ beside it); no cell may fail or print an error."""
    require("nbclient", "nbformat", "ipykernel", "jupyter_rfb", "IPython")
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(block.text) for block in cells]
    folder = clone_folder(tmp_path)
    try:
        NotebookClient(notebook, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(folder)}}).execute()
    except CellExecutionError as exc:
        failed = next((b for b, c in zip(cells, notebook.cells, strict=True)
                       if any(o["output_type"] == "error" for o in c.get("outputs", []))), None)
        pytest.fail(f"{failed.id if failed else cells[0].id}: the cell fails: {exc}")
    for block, cell in zip(cells, notebook.cells, strict=True):
        for output in cell.get("outputs", []):
            assert output.get("name") != "stderr" or "Traceback" not in output.get("text", ""), \
                f"{block.id}: {output.get('text')}"
        assert cell.get("outputs") or not block.text.strip().splitlines()[-1].isidentifier(), \
            f"{block.id}: the cell's last line shows nothing"


# ---------------------------------------------------------------------------------- in process

def test_import_emberfx_loads_no_notebook_package():
    code = ("import sys, json, emberfx; names = dir(emberfx); emberfx.show; "
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'IPython', 'ipykernel', "
            "'ipywidgets', 'jupyter_rfb', 'matplotlib', 'rendercanvas', 'wgpu'}); "
            "print(json.dumps([names, heavy]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT / "tests")
    assert done.returncode == 0, done.stderr
    names, heavy = json.loads(done.stdout)
    assert heavy == []
    assert {"Engine", "load_scene", "run", "show", "EmberError", "__version__"} <= set(names)
    assert all(not n.startswith("_") or n == "__version__" for n in names), names


def test_show_outside_a_kernel_is_a_one_line_usage_error():
    require("IPython", "jupyter_rfb")
    import emberfx
    from emberfx.core.errors import UsageError

    with pytest.raises(UsageError) as caught:
        emberfx.show("fountain")
    message = str(caught.value)
    assert "\n" not in message and "Jupyter kernel" in message and "emberfx.run" in message


@pytest.fixture
def small_engine(gpu):
    import emberfx

    engine = emberfx.Engine(emberfx.load_scene(FOUNTAIN), size=(97, 61))   # odd sizes
    engine.step(20)
    yield engine
    engine.close()


def test_repr_png_is_the_rendered_frame_losslessly(small_engine):
    png = small_engine._repr_png_()
    assert png is not None and png.startswith(b"\x89PNG\r\n\x1a\n")
    import io

    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        decoded = np.asarray(image.convert("RGBA"))
    np.testing.assert_array_equal(decoded, small_engine.render())
    assert lit_fraction(decoded[..., :3]) > 0.005
    small_engine.close()
    assert small_engine._repr_png_() is None   # IPython falls back to the text repr


def test_video_checks_its_arguments_and_embeds_every_frame(small_engine, tmp_path):
    require("IPython")
    from emberfx.app.video import count_frames
    from emberfx.core.errors import UsageError

    for frames in (0, 2.5, True, "3"):
        with pytest.raises(UsageError, match=r"Engine\.video\(frames\)"):
            small_engine.video(frames=frames)
    for fps in (0, -1.0, float("nan"), "30"):
        with pytest.raises(UsageError, match=r"Engine\.video\(fps\)"):
            small_engine.video(frames=2, fps=fps)
    before = small_engine.clock.steps
    clip = small_engine.video(frames=3, fps=30)
    assert small_engine.clock.steps == before + 3   # one fixed step per video frame
    assert (clip.width, clip.height) == (97, 61)
    path = tmp_path / "clip.mp4"
    path.write_bytes(data_uri_bytes(clip._repr_html_(), "video"))
    assert count_frames(path) == (3, "")
