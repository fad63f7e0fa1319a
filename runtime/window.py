"""The interactive face of the Engine: a glfw window driven by rendercanvas.

The window owns no simulation logic. Each frame it measures real time, lets the Engine's
fixed-timestep accumulator decide how many steps that is (``engine.advance``), and asks the Engine
to draw into the window's surface texture (``engine.draw_to``). Keys: Escape closes, Space pauses.

Nothing here is imported by the runtime core; the CLI and ``emberfx.run`` import it lazily.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

from .errors import EmberError

# After a stall (window drag, breakpoint, first-frame shader compile) don't try to catch up on
# seconds of simulation at once; the Engine may cap too, this keeps the window responsive anyway.
MAX_FRAME_DT = 0.25


def has_display() -> bool:
    """True when a glfw window can be opened here.

    On Linux a display server must be named in DISPLAY or WAYLAND_DISPLAY; that check is cheap and
    avoids glfw's noisy errors. Then glfw itself must initialise (a stale DISPLAY, a missing libglfw).
    """
    if sys.platform.startswith("linux") or "bsd" in sys.platform:
        if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            return False
    try:
        import glfw
    except Exception:  # ImportError, or OSError when the shared library can't load
        return False
    saved = getattr(glfw, "ERROR_REPORTING", None)
    try:
        glfw.ERROR_REPORTING = "ignore"  # a failed init is an answer here, not an error
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # Left initialised on success: rendercanvas calls glfw.init() again, which is a no-op.
            return bool(glfw.init())
    except Exception:
        return False
    finally:
        if saved is not None:
            glfw.ERROR_REPORTING = saved


def can_present(adapter) -> bool:
    """Whether wgpu can show frames from this adapter in a glfw window.

    wgpu's OpenGL backend (llvmpipe without a Vulkan driver) can't: configuring the surface
    panics inside wgpu-native and aborts the whole process, so ask before trying.
    """
    return adapter.info.get("backend_type") != "OpenGL"


NO_PRESENT_HINT = ("install a Vulkan driver (with no GPU: mesa-vulkan-drivers) or pick another "
                   "adapter with EMBERFX_ADAPTER")


class _Runner:
    """State shared by the draw callback and the key handler of one window."""

    def __init__(self, engine, canvas, ctx, loop, frames, screenshot, title):
        self.engine, self.canvas, self.ctx, self.loop = engine, canvas, ctx, loop
        self.frames, self.screenshot, self.title = frames, screenshot, title
        self.drawn = 0
        self.paused = False
        self.last: float | None = None
        self.closing = False
        self.saved = False
        self.error: BaseException | None = None

    def draw(self) -> None:
        # rendercanvas logs exceptions from a draw function and keeps calling it, which would
        # repeat one error every frame; instead remember the first one, close, and re-raise it
        # from run_window once the loop has stopped.
        if self.closing:
            return
        try:
            now = time.perf_counter()
            dt = 0.0 if self.last is None else min(now - self.last, MAX_FRAME_DT)
            self.last = now
            self.engine.advance(0.0 if self.paused else dt)
            self.engine.draw_to(self.ctx.get_current_texture())
            self.drawn += 1
            if self.frames is not None and self.drawn >= self.frames:
                self.save_screenshot()
                self.close()
        except BaseException as exc:  # KeyboardInterrupt too: stop cleanly, re-raise later
            self.error = exc
            self.close()

    def save_screenshot(self) -> None:
        if self.screenshot is not None and not self.saved:
            from .output import write_png

            write_png(self.screenshot, self.engine.render())
            self.saved = True

    def on_key(self, event: dict) -> None:
        key = event.get("key")
        if key == "Escape":
            self.close()
        elif key == " ":
            self.paused = not self.paused
            self.last = None  # don't count the paused time as one long frame on resume
            self.canvas.set_title(self.title + (" (paused)" if self.paused else ""))
        scripts = getattr(self.engine, "scripts", None)
        if scripts is not None and key:
            scripts.input.keys.add(key)
            scripts.key(key)   # on_key(ctx, key) hooks; a failing hook is reported, not raised

    def on_key_up(self, event: dict) -> None:
        scripts = getattr(self.engine, "scripts", None)
        if scripts is not None:
            scripts.input.keys.discard(event.get("key"))

    def on_pointer(self, event: dict) -> None:
        scripts = getattr(self.engine, "scripts", None)
        if scripts is not None and "x" in event:
            scripts.input.mouse = (event["x"], event["y"])

    def close(self) -> None:
        # Close after the current draw/event dispatch returns, not in the middle of it; when the
        # last canvas closes, rendercanvas stops the loop and loop.run() returns.
        if not self.closing:
            self.closing = True
            self.loop.call_soon(self.canvas.close)


def run_window(engine, frames: int | None = None, screenshot: str | os.PathLike | None = None,
               title: str | None = None) -> None:
    """Show ``engine`` in a window until it is closed, or for ``frames`` frames.

    With ``screenshot``, the final state is written there as a PNG (``engine.render()``, at the
    engine's size) when the window closes: after ``frames`` frames, or on Escape / the close button.
    """
    if not has_display():
        raise EmberError("no display to open a window on (DISPLAY/WAYLAND_DISPLAY unset or glfw "
                         "cannot start); use 'emberfx render' to render headless")
    if screenshot is not None:
        screenshot = Path(screenshot)
        if screenshot.suffix.lower() != ".png":
            raise EmberError(f"a screenshot must be a .png file, not '{screenshot.name}'")
    if not can_present(engine.adapter):
        raise EmberError(f"the OpenGL adapter cannot show a window; {NO_PRESENT_HINT}")
    from rendercanvas.glfw import RenderCanvas, loop

    if title is None:
        name = getattr(getattr(engine.scene, "settings", None), "name", None) or "scene"
        title = f"emberfx - {name}"
    canvas = RenderCanvas(size=tuple(engine.size), title=title, update_mode="continuous",
                          max_fps=60)
    ctx = canvas.get_wgpu_context()
    ctx.configure(device=engine.device, format=ctx.get_preferred_format(engine.adapter))
    runner = _Runner(engine, canvas, ctx, loop, frames, screenshot, title)
    canvas.add_event_handler(runner.on_key, "key_down")
    canvas.add_event_handler(runner.on_key_up, "key_up")
    canvas.add_event_handler(runner.on_pointer, "pointer_move")
    canvas.request_draw(runner.draw)
    try:
        loop.run()
    finally:
        if not canvas.get_closed():  # e.g. Ctrl-C while the loop was idle
            canvas.close()
    if runner.error is not None:
        raise runner.error
    runner.save_screenshot()  # closed by the user before `frames` (or with no frame limit)


def run(scene_or_path, size: tuple[int, int] | None = None, frames: int | None = None,
        screenshot: str | os.PathLike | None = None) -> None:
    """``emberfx.run(scene_or_path)``: load the scene if given a path, open it in a window."""
    from .engine import Engine
    from .scene import Scene, load_scene

    scene = scene_or_path if isinstance(scene_or_path, Scene) else load_scene(scene_or_path)
    engine = Engine(scene, size=size)
    try:
        run_window(engine, frames=frames, screenshot=screenshot)
    finally:
        engine.close()
