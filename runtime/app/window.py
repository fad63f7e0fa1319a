"""The interactive face of the Engine: a glfw window driven by rendercanvas.

The window owns no simulation logic. Each frame it polls the hot reloader, measures real time,
lets the Engine's fixed-timestep accumulator decide how many steps that is (``engine.advance``,
scaled by the speed keys) and asks the Engine to draw into the window's surface texture
(``engine.draw_to``), the last step and the draw in one submission (``engine.frame()``), then
draws the inspector over it.

Keys: Space pause, . single step (paused), + / - simulation speed, R reload, S screenshot,
F1 inspector, Escape quit; every key also goes to the scripts' on_key and, through the scene's
``[bindings]``, to on_event. The mouse goes to runtime/app/interaction.py (camera, Life painting,
follow_mouse) and to ``ctx.input``.

Nothing here is imported by the runtime core; the CLI and ``emberfx.run`` import it lazily.
"""

from __future__ import annotations

import os
import re
import sys
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from emberfx.core.errors import EmberError
from emberfx.model.keys import key_name

if TYPE_CHECKING:
    from emberfx.app.inspector import Inspector

# After a stall (window drag, breakpoint, first-frame shader compile) don't try to catch up on
# seconds of simulation at once; the Engine may cap too, this keeps the window responsive anyway.
MAX_FRAME_DT = 0.25


def has_display() -> bool:
    """True when a glfw window can be opened here.

    On Linux a display server must be named in DISPLAY or WAYLAND_DISPLAY; that check is cheap and
    avoids glfw's noisy errors. Then glfw itself must initialise (a stale DISPLAY, a missing
    libglfw).
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
NO_DISPLAY = "no display (DISPLAY/WAYLAND_DISPLAY unset or glfw cannot start)"


SPEEDS = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)   # simulation speed steps for + and -
TITLE_EVERY = 0.5     # seconds between title updates (fps, speed, errors)
REPORT_EVERY = 1.0    # at most one console line per second for a repeating error
WINDOW_READBACK_EVERY = 4   # counters for the inspector 15 times a second at 60 steps/s


class _Runner:
    """State shared by the draw callback and the input handlers of one window."""

    def __init__(self, engine, canvas, ctx, loop, frames, screenshot, title,
                 reload_interval: float = 0.25):
        from emberfx.app.interaction import Pointer
        from emberfx.model.hot_reload import HotReloader

        self.engine, self.canvas, self.ctx, self.loop = engine, canvas, ctx, loop
        self.frames, self.screenshot, self.title = frames, screenshot, title
        self.drawn = 0
        self.paused = False
        self.pending_steps = 0        # '.' while paused
        self.speed_index = SPEEDS.index(1.0)
        self.last: float | None = None
        self.fps = 0.0
        self.closing = False
        self.saved = False
        self.error: BaseException | None = None
        self.reloader = HotReloader(engine, interval=reload_interval)
        engine.readback_every = WINDOW_READBACK_EVERY
        self.pointer = Pointer(engine)
        self.inspector: Inspector | None = None
        self.problem: str | None = None   # the latest reported frame-loop error, for the title
        self.last_report = -1e9
        self.next_title = 0.0

    @property
    def speed(self) -> float:
        return SPEEDS[self.speed_index]

    def viewport(self) -> tuple[float, float]:
        return tuple(self.canvas.get_logical_size())

    # the frame -----------------------------------------------------------------------------
    def draw(self) -> None:
        # rendercanvas logs exceptions from a draw function and keeps calling it, which would
        # repeat one error every frame; a bug (not an EmberError) is remembered, the window
        # closes and run_window re-raises it once the loop has stopped.
        if self.closing:
            return
        try:
            now = time.perf_counter()
            dt = 0.0 if self.last is None else min(now - self.last, MAX_FRAME_DT)
            self.last = now
            if dt > 0.0:
                self.fps = 1.0 / dt if self.fps == 0.0 else 0.9 * self.fps + 0.1 / dt
            self.reloader.poll()
            try:
                with self.engine.frame():   # the last step and the draw: one submission
                    if self.paused:
                        self.engine.advance(0.0)
                        if self.pending_steps:
                            self.engine.step(self.pending_steps)
                            self.pending_steps = 0
                    else:
                        self.engine.advance(dt * self.speed)
                    self.engine.draw_to(self.ctx.get_current_texture())
            except EmberError as exc:
                # a user-level problem (a script set a capacity the device refuses, ...): the
                # engine kept its last good state; say so and keep running
                self.report(str(exc))
            if self.inspector is None and self.reloader.error:
                self.toggle_inspector(show=False)   # the panel's banner shows the error
            if self.inspector is not None:
                self.inspector.render()
            self.drawn += 1
            self.update_title(now)
            if self.frames is not None and self.drawn >= self.frames:
                self.save_screenshot()
                self.close()
        except BaseException as exc:  # KeyboardInterrupt too: stop cleanly, re-raise later
            self.error = exc
            self.close()

    def report(self, message: str) -> None:
        self.problem = message
        now = time.monotonic()
        if now - self.last_report >= REPORT_EVERY:
            self.last_report = now
            print(f"emberfx: error: {message} (the scene keeps running)", file=sys.stderr)

    def update_title(self, now: float) -> None:
        if now < self.next_title:
            return
        self.next_title = now + TITLE_EVERY
        parts = [self.title, f"{self.fps:.0f} fps"]
        if self.speed != 1.0:
            parts.append(f"x{self.speed:g}")
        if self.paused:
            parts.append("paused")
        if self.reloader.error:
            parts.append("RELOAD FAILED: " + self.reloader.error)
        elif self.problem:
            parts.append("error: " + self.problem)
        self.canvas.set_title(" - ".join(parts))

    def save_screenshot(self) -> None:
        if self.screenshot is not None and not self.saved:
            from emberfx.app.output import write_png

            write_png(self.screenshot, self.engine.render())
            self.saved = True

    def save_numbered_screenshot(self) -> Path:
        """S: the current frame as a PNG in the working directory, named after scene and frame."""
        from emberfx.app.output import write_png

        name = re.sub(r"[^A-Za-z0-9_-]+", "_", self.engine.scene.settings.name).strip("_")
        path = Path.cwd() / f"{name or 'scene'}-{self.engine.clock.steps:06d}.png"
        write_png(path, self.engine.render())
        print(f"emberfx: saved {path}", file=sys.stderr)
        return path

    def toggle_inspector(self, show: bool | None = None) -> None:
        from emberfx.app.inspector import open_inspector

        if self.inspector is None:
            try:
                self.inspector = open_inspector(self.engine, self.canvas, self)
            except EmberError as exc:
                self.report(str(exc))
                return
        self.inspector.visible = (not self.inspector.visible) if show is None else show

    # input ---------------------------------------------------------------------------------
    def on_key(self, event: dict) -> None:
        name = key_name(event.get("key"))
        if name is None:
            return
        if name == "escape":
            self.close()
        elif name == "space":
            self.paused = not self.paused
            self.last = None  # don't count the paused time as one long frame on resume
        elif name == "." and self.paused:
            self.pending_steps += 1
        elif name == "=":
            self.speed_index = min(self.speed_index + 1, len(SPEEDS) - 1)
        elif name == "-":
            self.speed_index = max(self.speed_index - 1, 0)
        elif name == "r":
            self.reloader.poll(force=True)
        elif name == "s":
            self.save_numbered_screenshot()
        elif name == "f1":
            self.toggle_inspector()
        self.next_title = 0.0
        scripts = self.engine.scripts
        scripts.input.keys.add(name)
        scripts.key(name)   # on_key(ctx, key) hooks; a failing hook is reported, not raised
        event_name = self.engine.scene.bindings.get(name)
        if event_name is not None:
            scripts.event(event_name, {"key": name})

    def on_key_up(self, event: dict) -> None:
        self.engine.scripts.input.keys.discard(key_name(event.get("key")))

    def on_pointer(self, event: dict) -> None:
        kind = event["event_type"]
        inputs = self.engine.scripts.input
        if kind == "pointer_leave":
            inputs.inside = False
            return
        if kind == "pointer_enter" or "x" not in event:
            inputs.inside = kind == "pointer_enter" or inputs.inside
            return
        x, y = event["x"], event["y"]
        inputs.mouse, inputs.inside = (x, y), True
        inputs.buttons = set(event.get("buttons", ()))
        if kind == "pointer_down":
            self.pointer.down(x, y, event.get("button", 0), self.viewport(),
                              event.get("modifiers", ()))
        elif kind == "pointer_move":
            self.pointer.move(x, y, self.viewport())
        elif kind == "pointer_up":
            self.pointer.up(x, y, self.viewport())
        elif kind == "wheel":
            self.pointer.wheel(event.get("dy", 0.0), x, y, self.viewport())

    def close(self) -> None:
        # Close after the current draw/event dispatch returns, not in the middle of it; when the
        # last canvas closes, rendercanvas stops the loop and loop.run() returns.
        if not self.closing:
            self.closing = True
            self.loop.call_soon(self.canvas.close)


def attach(engine, canvas, loop, *, title: str, frames: int | None = None,
           screenshot: str | os.PathLike | None = None) -> _Runner:
    """Run ``engine``'s frame loop on a rendercanvas ``canvas`` of ``loop``: its wgpu context
    presents the frames, its keys and pointer drive the runner. The glfw window and the notebook
    canvas (runtime/app/notebook.py) share this wiring, so both answer the same keys and mouse."""
    ctx = canvas.get_wgpu_context()
    ctx.configure(device=engine.device, format=ctx.get_preferred_format(engine.adapter))
    runner = _Runner(engine, canvas, ctx, loop, frames, screenshot, title)
    canvas.add_event_handler(runner.on_key, "key_down")
    canvas.add_event_handler(runner.on_key_up, "key_up")
    canvas.add_event_handler(runner.on_pointer, "pointer_move", "pointer_down", "pointer_up",
                             "pointer_enter", "pointer_leave", "wheel")
    canvas.request_draw(runner.draw)
    return runner


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
    runner = attach(engine, canvas, loop, frames=frames, screenshot=screenshot, title=title)
    try:
        loop.run()
    finally:
        if not canvas.get_closed():  # e.g. Ctrl-C while the loop was idle
            canvas.close()
    if runner.error is not None:
        raise runner.error
    runner.save_screenshot()  # closed by the user before `frames` (or with no frame limit)


def run(scene_or_path, size: tuple[int, int] | None = None, frames: int | None = None,
        screenshot: str | os.PathLike | None = None, quality: str = "auto",
        **options) -> Path | None:
    """``emberfx.run(scene_or_path)``: load the scene if given a path, open it in a window.

    Where no window can open (no display, or an OpenGL adapter that cannot present), it says so
    on stderr and renders headless as ``emberfx run`` does: ``frames`` (default: the scene's
    ``[scene] duration``) fixed steps to ``screenshot``, or else to ``<scene>.mp4`` in the
    working folder, and returns that path. On a CPU adapter a scene's ``[cpu]`` preset applies
    unless ``quality = "full"``. ``options`` go to the Engine (``scripts=False``, ...).
    """
    from emberfx.app.headless import (
        build_engine,
        for_adapter,
        headless_output,
        render_headless,
        say,
    )
    from emberfx.model.scene import Scene, load_scene

    scene = scene_or_path if isinstance(scene_or_path, Scene) else load_scene(scene_or_path)
    scene = for_adapter(scene, quality)
    if screenshot is not None and Path(screenshot).suffix.lower() != ".png":
        raise EmberError(f"a screenshot must be a .png file, not '{Path(screenshot).name}'")
    engine, reason = None, NO_DISPLAY
    if has_display():
        engine = build_engine(scene, size, **options)
        if can_present(engine.adapter):
            try:
                run_window(engine, frames=frames, screenshot=screenshot)
            finally:
                engine.close()
            return None
        reason = f"the OpenGL adapter cannot show a window ({NO_PRESENT_HINT})"
    out = headless_output(scene, screenshot)
    count = frames or scene.settings.duration_steps()
    say(f"{reason}; rendering {count} frames headless to {out}")
    render_headless(scene, count, out, size=size, engine=engine, **options)
    say(f"wrote {out}")
    return out
