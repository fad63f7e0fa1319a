"""The F1 inspector: a Dear ImGui panel over the running scene (wgpu.utils.imgui + imgui-bundle).

It shows the frame rate, the simulation clock, the last hot-reload result, per-pass GPU times
(timestamp queries where the adapter has them, CPU encode times otherwise: the Engine's profiler
is switched on only while that section is open, because it splits shared compute passes) and the
counters from the asynchronous readbacks (alive particles, Life population). Every component
field can be edited: the new value is validated as a scene file would be (``check_field``) and
then set on the live component, which marks it for the next step's live-edit sync: live fields
rewrite a uniform, rebuild-class fields (marked "rebuild") rebuild that entity. Nested structs
(an emitter's shape, bursts) and lists (colour stops, curves) get one editor per element; an
unset optional field (``None``) is shown read-only.

The window creates the panel the first time it is needed (F1, or a reload error to show), so
imgui-bundle is only imported then.
"""

from __future__ import annotations

import copy
import dataclasses
import typing

import msgspec

from emberfx.core.errors import EmberError
from emberfx.model.colors import parse_color
from emberfx.model.components import Change, changes_of

PANEL_WIDTH = 460
RED = (1.0, 0.42, 0.38, 1.0)
DIM = (0.65, 0.65, 0.7, 1.0)


def check_field(component, name: str, value) -> str | None:
    """None when ``component.name = value`` is valid, else the validation message. Checked on a
    copy with the same rules as the scene loader, so a bad value never reaches the engine."""
    trial = copy.deepcopy(component)
    setattr(trial, name, value)
    try:
        msgspec.convert(msgspec.to_builtins(trial), type(trial), strict=True)
    except (msgspec.ValidationError, ValueError, TypeError) as exc:
        return f"{name}: {exc}"
    return None


def _rgb_to_hex(rgb, keep_alpha: str = "") -> str:
    return "#" + "".join(f"{round(min(max(c, 0.0), 1.0) * 255):02x}" for c in rgb) + keep_alpha


class Inspector:
    def __init__(self, engine, canvas, runner):
        from imgui_bundle import imgui
        from wgpu.utils.imgui import ImguiRenderer

        self.imgui = imgui
        self.engine = engine
        self.runner = runner          # fps, speed, paused, the reloader
        self.visible = False
        self.errors: dict[tuple[str, str, str], str] = {}   # (entity, key, field) -> message
        self.renderer = ImguiRenderer(engine.device, canvas)
        self.renderer.set_gui(self._gui)
        self.open_all = False   # open every tree node (tests; a first look at a small scene)

    def render(self) -> None:
        """Draw the panel (or, hidden, just a pending reload error) over the presented frame."""
        if self.visible or self.runner.reloader.error:
            self.renderer.render()
        if not self.visible and self.engine.profiling:
            self.engine.profiling = False

    # the panel -----------------------------------------------------------------------------
    def _gui(self) -> None:
        imgui = self.imgui
        if not self.visible:
            self._error_banner()
            return
        imgui.set_next_window_pos(imgui.ImVec2(8, 8), imgui.Cond_.first_use_ever)
        height = max(200.0, imgui.get_io().display_size.y - 16)   # the window's height
        imgui.set_next_window_size(imgui.ImVec2(PANEL_WIDTH, height), imgui.Cond_.first_use_ever)
        expanded, _ = imgui.begin("emberfx inspector (F1)")
        if expanded:
            self._header()
            self._open_next()
            opened = imgui.collapsing_header("Pass timings")
            opened = opened[0] if isinstance(opened, tuple) else opened
            if opened != self.engine.profiling:
                self.engine.profiling = bool(opened)
            if opened:
                self._timings()
            if imgui.collapsing_header("Entities", imgui.TreeNodeFlags_.default_open):
                self._entities()
        imgui.end()

    def _error_banner(self) -> None:
        imgui = self.imgui
        imgui.set_next_window_pos(imgui.ImVec2(8, 8))
        imgui.begin("reload error", None, imgui.WindowFlags_.always_auto_resize
                    | imgui.WindowFlags_.no_title_bar)
        imgui.text_colored(imgui.ImVec4(*RED), "Reload failed; the last good scene keeps running:")
        imgui.text_wrapped(self.runner.reloader.error or "")
        imgui.end()

    def _header(self) -> None:
        imgui, engine, runner = self.imgui, self.engine, self.runner
        stats = engine.stats()
        imgui.text(f"{engine.scene.settings.name}  -  {stats['adapter']}")
        imgui.text(f"{runner.fps:6.1f} fps   frame {stats['frame']}   t = {stats['time']:.2f} s")
        imgui.text(f"speed x{runner.speed:g}{'   PAUSED (. steps)' if runner.paused else ''}   "
                   f"last step {stats['step_cpu_ms']:.2f} ms (CPU + submit)")
        reloader = runner.reloader
        if reloader.error:
            imgui.text_colored(imgui.ImVec4(*RED), "reload failed:")
            imgui.text_wrapped(reloader.error)
        elif reloader.last_message:
            imgui.text_colored(imgui.ImVec4(*DIM), reloader.last_message)
        self._stats = stats

    def _timings(self) -> None:
        imgui = self.imgui
        times = self.engine.pass_times()
        source = self._stats.get("pass_time_source") or ""
        imgui.text_colored(imgui.ImVec4(*DIM), f"milliseconds per pass ({source})" if times
                           else "waiting for the first results...")
        if times and imgui.begin_table("passes", 2, imgui.TableFlags_.row_bg):
            for name, ms in times.items():
                imgui.table_next_row()
                imgui.table_next_column()
                imgui.text(name)
                imgui.table_next_column()
                imgui.text(f"{ms:8.3f}")
            imgui.end_table()
            imgui.text(f"total {sum(times.values()):.3f} ms")

    def _entities(self) -> None:
        imgui = self.imgui
        counters = self._stats.get("entities", {})
        for name in self.engine.entity_names():
            counts = ", ".join(f"{k} {v}" for k, v in counters.get(name, {}).items()
                               if isinstance(v, (int, float)))
            self._open_next()
            if imgui.tree_node(f"{name}##entity"):
                if counts:
                    imgui.text_colored(imgui.ImVec4(*DIM), counts)
                for key, component in self.engine.components_of(name).items():
                    self._open_next()
                    if imgui.tree_node(f"{key}##{name}"):
                        self._fields(name, key, component)
                        imgui.tree_pop()
                imgui.tree_pop()
            elif counts:
                imgui.same_line()
                imgui.text_colored(imgui.ImVec4(*DIM), counts)

    def _open_next(self) -> None:
        if self.open_all:
            self.imgui.set_next_item_open(True)

    def _fields(self, entity: str, key: str, component) -> None:
        imgui = self.imgui
        changes = changes_of(type(component))
        hints = typing.get_type_hints(type(component), include_extras=True)
        for f in dataclasses.fields(component):
            value = getattr(component, f.name)
            rebuilds = changes.get(f.name) is Change.REBUILD
            label = f"{f.name}{' (rebuild)' if rebuilds else ''}##{entity}.{key}"
            changed, new = self._widget(label, value, hints.get(f.name))
            where = (entity, key, f.name)
            if changed:
                problem = check_field(component, f.name, new)
                if problem:
                    self.errors[where] = problem
                else:
                    self.errors.pop(where, None)
                    setattr(component, f.name, new)
            if where in self.errors:
                imgui.text_colored(imgui.ImVec4(*RED), self.errors[where])

    def _widget(self, label: str, value, hint):
        """One editor for one field: (changed, new value) in the field's own Python type."""
        imgui = self.imgui
        choices = _literal_choices(hint)
        if choices and value in choices:
            changed, index = imgui.combo(label, choices.index(value), [str(c) for c in choices])
            return changed, choices[index]
        if isinstance(value, bool):
            return imgui.checkbox(label, value)
        if isinstance(value, int):
            return imgui.input_int(label, value)
        if isinstance(value, float):
            return imgui.drag_float(label, value, max(abs(value) * 0.01, 0.001), format="%.4g")
        if isinstance(value, str):
            try:
                rgb = list(parse_color(value)[:3])
            except ValueError:
                rgb = None
            if rgb is not None:
                changed, new = imgui.color_edit3(label, rgb)
                return changed, _rgb_to_hex(new, value[7:9])
            return imgui.input_text(label, value)
        if (isinstance(value, (tuple, list)) and 2 <= len(value) <= 4
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
            floats = all(isinstance(v, float) for v in value)
            editor = getattr(imgui, f"{'drag_float' if floats else 'input_int'}{len(value)}")
            changed, new = editor(label, list(value))
            return changed, type(value)(float(v) if floats else int(v) for v in new)
        if dataclasses.is_dataclass(value):
            return self._nested(label, value)
        if isinstance(value, (tuple, list)) and value:
            return self._items(label, value)
        imgui.text_colored(imgui.ImVec4(*DIM), f"{label.split('##')[0]} = {value!r}")
        return False, value

    def _nested(self, label: str, value):
        """A field holding a small struct (an emitter's shape, a burst): one editor per field."""
        imgui = self.imgui
        self._open_next()
        if not imgui.tree_node(label):
            return False, value
        hints = typing.get_type_hints(type(value), include_extras=True)
        changed_any, new = False, copy.copy(value)
        for f in dataclasses.fields(value):
            changed, item = self._widget(f"{f.name}##{label}.{f.name}", getattr(value, f.name),
                                         hints.get(f.name))
            if changed:
                setattr(new, f.name, item)   # validated with the whole component by the caller
                changed_any = True
        imgui.tree_pop()
        return changed_any, new

    def _items(self, label: str, value):
        """A list (colour stops, curves, bursts): one editor per element."""
        imgui = self.imgui
        self._open_next()
        if not imgui.tree_node(f"{label.split('##')[0]} [{len(value)}]##{label}"):
            return False, value
        items, changed_any = list(value), False
        for index, item in enumerate(value):
            changed, new = self._widget(f"[{index}]##{label}[{index}]", item, None)
            if changed:
                items[index], changed_any = new, True
        imgui.tree_pop()
        return changed_any, type(value)(items)


def _literal_choices(hint) -> list | None:
    """The allowed values of a ``Literal[...]`` field (also inside Annotated/Optional)."""
    for _ in range(3):
        origin = typing.get_origin(hint)
        if origin is typing.Literal:
            return list(typing.get_args(hint))
        if origin is typing.Annotated:
            hint = typing.get_args(hint)[0]
            continue
        return None
    return None


def open_inspector(engine, canvas, runner) -> Inspector:
    """The panel, or an EmberError saying what to install when imgui-bundle is missing."""
    try:
        return Inspector(engine, canvas, runner)
    except ImportError as exc:
        raise EmberError(f"the inspector needs imgui-bundle ({exc}); pip install imgui-bundle") \
            from None
