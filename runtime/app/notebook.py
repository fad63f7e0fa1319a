"""The Jupyter face of the Engine: an inline canvas, a frame as PNG, a clip as inline MP4.

    import emberfx
    view = emberfx.show("fountain", size=(640, 360))   # a live canvas in the cell's output
    view.engine.entity("fountain").emitter.rate = 5000   # edits show in the next frame
    view.engine                                          # the current frame (Engine._repr_png_)
    view.engine.video(frames=120)                        # an MP4 that plays in the notebook

The canvas is rendercanvas's jupyter backend (a jupyter_rfb remote frame buffer). It runs the same
frame loop as the glfw window (window.attach: fixed-timestep accumulator, hot reload, the same
keys and mouse), driven by the kernel's asyncio loop between cell executions. jupyter_rfb asks
for a frame only while a view of the canvas is visible in a browser, so a scrolled-away or
closed canvas costs nothing and its scene does not advance.

Everything here needs the ``notebook`` extra (``pip install "emberfx[notebook]"``) except
``png_bytes``, which needs only pillow. Nothing imports this module at ``import emberfx``; the
missing extra is reported when one of these functions is called.
"""

from __future__ import annotations

import asyncio
import functools
import io
import tempfile
import threading
import traceback
from pathlib import Path

from emberfx.core.errors import UsageError

INSTALL_HINT = 'pip install "emberfx[notebook]"'
VIDEO_ATTRIBUTES = "controls loop autoplay muted playsinline"


def _require(module: str, what: str):
    """Import ``module`` for ``what``, or say in one line which extra brings it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise UsageError(f"{what} needs the notebook extra ({INSTALL_HINT}); cannot import "
                         f"'{exc.name or module}'") from None


def png_bytes(engine) -> bytes:
    """The engine's current frame (``engine.render()``) encoded as PNG."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(engine.render(), "RGBA").save(buffer, format="PNG")
    return buffer.getvalue()


def video(engine, frames: int = 120, fps: float | None = None):
    """Step ``engine`` ``frames`` fixed steps, one video frame each, and return the clip as an
    ``IPython.display.Video`` with the MP4 embedded (the notebook keeps it when saved).

    The simulation advances by ``frames`` steps, as ``emberfx render`` does. ``fps`` defaults to
    one frame per fixed step, so the clip plays at simulation speed.
    """
    display = _require("IPython.display", "Engine.video")
    from emberfx.app.output import render_to_file

    if isinstance(frames, bool) or not isinstance(frames, int) or frames < 1:
        raise UsageError(f"Engine.video(frames): expected a whole number of frames, at least 1, "
                         f"found {frames!r}")
    if fps is not None and (isinstance(fps, bool) or not isinstance(fps, (int, float))
                            or not 0 < fps < float("inf")):
        raise UsageError(f"Engine.video(fps): expected a positive number of frames per second, "
                         f"found {fps!r}")
    with tempfile.TemporaryDirectory(prefix="emberfx-video-") as folder:
        path = Path(folder) / "clip.mp4"
        render_to_file(engine, frames, path, fps=fps, progress=False)
        data = path.read_bytes()
    w, h = engine.size
    return display.Video(data=data, embed=True, mimetype="video/mp4", width=w, height=h,
                         html_attributes=VIDEO_ATTRIBUTES)


@functools.cache
def _canvas_class():
    """rendercanvas's jupyter canvas, made to draw and take events on the Engine's thread."""
    from rendercanvas.jupyter import RenderCanvas

    class EngineCanvas(RenderCanvas):
        """JupyterLab may send widget messages to a kernel subshell: another thread, with its
        own event loop. jupyter_rfb then asks for frames (``get_frame``) and passes on mouse
        and key events (``handle_event``) on that thread, but an Engine refuses calls from any
        thread but its creator's. Both are handed to the creating thread's event loop."""

        def __init__(self, *args, **kwargs):
            self._owner_thread = threading.get_ident()
            self._owner_loop = asyncio.get_running_loop()
            super().__init__(*args, **kwargs)

        def _handed_over(self, method, *args) -> bool:
            if threading.get_ident() == self._owner_thread:
                return False
            self._owner_loop.call_soon_threadsafe(method, *args)
            return True

        def get_frame(self):
            if self._handed_over(self.get_frame):
                return None   # the frame is sent when drawn (send_frame), as rendercanvas does
            return super().get_frame()

        def handle_event(self, event):
            if not self._handed_over(self.handle_event, event):
                super().handle_event(event)

    EngineCanvas.__qualname__ = "EngineCanvas"   # its repr in a cell's text output
    return EngineCanvas


class NotebookView:
    """What ``emberfx.show`` returns: the live ``canvas`` widget and its ``engine``.

    ``show`` displays the canvas in the cell that calls it; so that ``emberfx.show(...)`` as a
    cell's last line does not show it twice, this object displays nothing in that cell, and
    another view of the same canvas when it is the result of a later cell.
    """

    def __init__(self, engine, canvas, runner, owns_engine: bool, shown_in: int | None):
        self.engine, self.canvas, self.runner = engine, canvas, runner
        self._owns_engine = owns_engine
        self._shown_in = shown_in   # the execution count of the cell that displayed it

    @property
    def paused(self) -> bool:
        return self.runner.paused

    @paused.setter
    def paused(self, value: bool) -> None:
        self.runner.paused = bool(value)
        self.runner.last = None   # resume without counting the paused time as one frame

    def snapshot(self):
        """The last frame the canvas sent, as a display object (kept in a saved notebook)."""
        return self.canvas.snapshot()

    def close(self) -> None:
        """Close the canvas; an engine that ``show`` built from a scene is closed with it."""
        self.canvas.close()

    def _ipython_display_(self) -> None:
        from IPython import get_ipython
        from IPython.display import display

        shell = get_ipython()
        count = getattr(shell, "execution_count", None)
        if count is not None and count == self._shown_in:
            return
        display(self.canvas)

    def __repr__(self) -> str:
        w, h = self.engine.size
        state = "closed" if self.canvas.get_closed() else "open"
        return f"<emberfx NotebookView of '{self.engine.scene.settings.name}' {w}x{h}, {state}>"


def _client_player(scene_or_engine, size, frames, options):
    """show(..., client=True): the web page of an Engine's scene, or of a scene."""
    _require("IPython", "emberfx.show(client=True)")
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import Scene, load_scene
    from emberfx.web import notebook_player

    if isinstance(scene_or_engine, Engine):
        return notebook_player(scene_or_engine.scene, frames, size or scene_or_engine.size,
                               scripts=scene_or_engine.script_policy)
    scene = scene_or_engine if isinstance(scene_or_engine, Scene) else load_scene(scene_or_engine)
    return notebook_player(scene, frames, size, scripts=options.get("scripts", True))


def show(scene_or_engine, size: tuple[int, int] | None = None, *, client: bool = False,
         frames: int | None = None, **options):
    """Show a scene (a Scene, a scene file, a bundled scene's name) or an Engine as a live canvas
    in the output of the calling Jupyter cell, and return a ``NotebookView``.

    The scene runs at its fixed timestep while the canvas is visible. Mouse and keys are the
    window's: left drag orbits (or paints, on a Life layer), right drag pans, the wheel zooms;
    Space pauses, '.' steps, +/- change the speed, R reloads, S saves a screenshot, F1 opens the
    inspector, Escape closes the canvas. ``size`` is the canvas size in pixels (default: the
    engine's); ``options`` go to the Engine built from a scene (``scripts=False``, ...).

    ``client=True``: instead, the scene's web page (emberfx.web) as an HTML display: ``frames``
    steps from the start (default 300), replayed in the cell on the viewer's GPU with no kernel
    round trips, also when a trusted notebook is reopened without a kernel.
    """
    if client:
        return _client_player(scene_or_engine, size, frames, options)
    ipython = _require("IPython", "emberfx.show")
    jupyter = _require("rendercanvas.jupyter", "emberfx.show")
    from emberfx.app.window import attach
    from emberfx.engine.engine import Engine
    from emberfx.engine.engine_guard import render_size

    shell = ipython.get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        raise UsageError("emberfx.show needs a running Jupyter kernel (a notebook cell); "
                         "outside one use emberfx.run(scene) for a window")
    try:
        asyncio.get_running_loop()   # the canvas draws from the kernel's event loop
    except RuntimeError:
        raise UsageError("emberfx.show: call it from a notebook cell, not from a thread "
                         "without the kernel's event loop") from None
    if isinstance(scene_or_engine, Engine):
        if options:
            raise UsageError(f"emberfx.show(engine): Engine options ({', '.join(options)}) "
                             f"apply only when show builds the Engine from a scene")
        engine, owns_engine = scene_or_engine, False
    else:
        engine, owns_engine = Engine(scene_or_engine, size=size, **options), True
    try:
        canvas_size = engine.size if size is None else render_size(size, "emberfx.show(size)")
        name = engine.scene.settings.name or "scene"
        title = f"emberfx - {name}"
        canvas = _canvas_class()(size=canvas_size, title=title, update_mode="continuous",
                                 max_fps=60)
        runner = attach(engine, canvas, jupyter.loop, title=title)
    except BaseException:
        if owns_engine:
            engine.close()
        raise
    view = NotebookView(engine, canvas, runner, owns_engine, shell.execution_count)
    canvas.add_event_handler(lambda _event: _closed(view), "close")
    # Hidden time is not simulated: the first frame after a view reappears is a short one.
    canvas.observe(lambda _change: setattr(runner, "last", None), names=["_has_visible_views"])
    # Until a browser reports the view's size, the canvas has none (and would draw 1x1 frames,
    # resizing the engine): assume the requested size at a pixel ratio of 1.
    w, h = canvas_size
    canvas.handle_event({"event_type": "resize", "width": w, "height": h, "pixel_ratio": 1.0})
    # One frame now, before any browser asks: the output then carries a snapshot image, which a
    # saved notebook, nbconvert and a headless run (no front end) show.
    canvas.force_draw()
    canvas.display()
    return view


def _closed(view: NotebookView) -> None:
    """The canvas closed (Escape, the widget removed, or a bug in a frame): report a bug's
    traceback in the canvas's output area, and release an engine that show built."""
    error = view.runner.error
    if error is not None:
        view.canvas.print("".join(traceback.format_exception(error)).rstrip())
    if view._owns_engine:
        view.engine.close()
