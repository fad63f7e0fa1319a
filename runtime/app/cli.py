"""The ``emberfx`` command line: a thin face over load_scene, Engine, output and window.

Exit status: 0 ok, 1 an EmberError (a user mistake or environment problem, printed as one line
``emberfx: error: ...``), 2 a usage error (the usage line, then the message), 130 Ctrl-C, 143
SIGTERM (engine/interrupts.py). Anything else is a bug and keeps its traceback.

Families add their own commands (``registry.cli_command``); the parser lists them after the
built-in scene commands, and main() runs them with the same exit statuses.

Heavy modules (wgpu's adapter, the engine, imageio) are imported inside the commands, so
``validate`` and ``--help`` work on a machine without a GPU.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from pathlib import Path

from emberfx.app.arguments import (
    add_script_flags,
    check_output_suffix,
    parse_size,
    positive_int,
    script_policy_from_args,
)
from emberfx.app.headless import QUALITIES, for_adapter, output_size
from emberfx.core.errors import EmberError, UsageError
from emberfx.engine import interrupts
from emberfx.engine.script_watchdog import finish_process
from emberfx.model import registry

PROG = "emberfx"
SCENE_HELP = "scene .toml file, or a bundled scene's name (fountain, galaxy, ...)"
PASSES_SIZE = (64, 36)  # `passes` only needs the pass list, not a full-size target

# Limits `info` prints, in this order.
INFO_LIMITS = (
    "max_storage_buffer_binding_size",
    "max_buffer_size",
    "max_compute_workgroups_per_dimension",
    "max_compute_invocations_per_workgroup",
    "max_texture_dimension_2d",
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("emberfx")
    except PackageNotFoundError:
        return "unknown"


class _Parser(argparse.ArgumentParser):
    """ArgumentParser that prints the program name as 'emberfx: error:' like our own errors."""

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(2, f"{PROG}: error: {message}\n")


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    p = _Parser(prog=PROG, description="GPU particle and simulation runtime (wgpu).")
    p.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    subs: dict[str, argparse.ArgumentParser] = {}

    def add(name, help_):
        subs[name] = sub.add_parser(name, help=help_, description=help_)
        return subs[name]

    s = add("run", "open SCENE in a window (headless render when there is no display)")
    s.add_argument("scene", metavar="SCENE", help=SCENE_HELP)
    s.add_argument("--frames", type=positive_int, metavar="N",
                   help="exit after N frames (headless default: the scene's [scene] duration)")
    s.add_argument("--screenshot", type=Path, metavar="FILE", help="write the last frame as PNG")
    add_quality_flag(s)
    add_script_flags(s)

    s = add("render", "render SCENE headless to a PNG (last frame), GIF or MP4")
    s.add_argument("scene", metavar="SCENE", help=SCENE_HELP)
    s.add_argument("--frames", type=positive_int, metavar="N",
                   help="simulation steps to render, one per output frame (default: up to the "
                        "scene's [scene] preview time)")
    s.add_argument("--out", type=Path, required=True, metavar="FILE",
                   help="output file: .png, .gif or .mp4; .mov (PNG frames, keeps alpha); .exr "
                        "(the last frame, linear HDR before tonemapping; [exr] extra)")
    s.add_argument("--size", type=parse_size, metavar="WxH", help="image size (default: scene's)")
    from emberfx.app import compositing  # light: argparse only until it runs
    compositing.add_arguments(s)
    add_quality_flag(s)
    add_script_flags(s)

    s = add("validate", "check SCENE without a GPU and describe it, listing its scripts "
                        "(never run)")
    s.add_argument("scene", metavar="SCENE", help=SCENE_HELP)
    add_script_flags(s, run_flags=False)

    s = add("passes", "print SCENE's GPU passes in execution order (scripts are not run)")
    s.add_argument("scene", metavar="SCENE", help=SCENE_HELP)

    add("info", "show the GPU adapter, backend and limits")

    from emberfx.sweeps import command as sweep_command  # light: argparse only until it runs
    sweep_command.add_arguments(add("sweep", sweep_command.HELP))
    from emberfx.app import export as export_command
    export_command.add_arguments(add("export", export_command.HELP))

    for command in registry.cli_commands().values():   # loads the families
        if command.name in subs:
            raise RuntimeError(f"CLI command {command.name!r}: a built-in command has that name")
        command.add_arguments(add(command.name, command.help_text))

    s = add("web", "write SCENE as one self-contained web page that replays it with the "
                   "browser's WebGPU")
    s.add_argument("scene", metavar="SCENE", help=SCENE_HELP)
    s.add_argument("--out", type=Path, required=True, metavar="FILE", help="the page: FILE.html")
    s.add_argument("--frames", type=positive_int, metavar="N",
                   help="steps recorded; the page loops them (default: 300)")
    s.add_argument("--size", type=parse_size, metavar="WxH", help="page size (default: scene's)")
    add_script_flags(s)

    from emberfx.app import gallery_media  # light: argparse only until it runs
    gallery_media.add_arguments(add("gallery", gallery_media.HELP))

    s = add("bench", "run benchmarks (all when no NAME is given)")
    s.add_argument("names", nargs="*", metavar="NAME",
                   help="benchmarks to run, all when none is given (with --plot: the ones to "
                        "sweep); an unknown name lists the known ones")
    s.add_argument("--json", action="store_true", help="print results as JSON")
    s.add_argument("--workers", type=int, metavar="K", help="sweep: the local pool's workers")
    s.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="sweep: the Ray cluster to join (default: a local Ray, if installed)")
    s.add_argument("--plot", type=Path, metavar="DIR",
                   help="instead of the rows: sweep sizes of NAMEs (emitter, life, particle_life, "
                        "cloth, many; all when none) and write DIR/NAME.png (needs [plot])")
    s.add_argument("--from", dest="from_file", type=Path, metavar="FILE",
                   help="with --plot: redraw from FILE, a saved 'bench --plot DIR --json' output")
    return p, subs


# ---------------------------------------------------------------------------- helpers

def add_quality_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quality", choices=QUALITIES, default="auto",
                        help="auto: on a CPU adapter, apply the scene's [cpu] preset (lower grid "
                             "and particle counts, a smaller size; said on stderr); full: render "
                             "the scene as written (default: auto)")

def _load(text: str):
    from emberfx.model.scene import (
        load_scene,  # a bare name finds a bundled scene (resolve_scene_path)
    )

    return load_scene(text)


def _one_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return "; ".join(lines) or type(exc).__name__


def _engine(scene, size=None, scripts=True, announce=False):
    """The Engine; with ``announce``, the adapter and entities are named on stderr first (on a
    CPU adapter building and the first frame can take a minute)."""
    from emberfx.app.headless import build_engine

    return build_engine(scene, size, announce=announce, scripts=scripts)


def _render(scene, frames: int, out: Path, size=None, engine=None, scripts=True,
            transparent: bool = False, depth: Path | None = None) -> int:
    from emberfx.app.output import render_to_file

    if engine is None:
        size = output_size(out, tuple(size or scene.settings.size))
    else:   # `run` on an adapter that cannot present: the Engine is made
        output_size(out, tuple(engine.size), built=True)
    engine = engine or _engine(scene, size, scripts, announce=True)
    try:
        render_to_file(engine, frames, out, progress=True, transparent=transparent, depth=depth)
    finally:
        engine.close()
    print(f"wrote {out} ({frames} frame{'s' if frames != 1 else ''}, "
          f"{engine.size[0]}x{engine.size[1]})")
    return 0


# ---------------------------------------------------------------------------- commands

def cmd_validate(args) -> int:
    scene = _load(args.scene)
    from emberfx.engine.scripting import (
        ScriptPolicy,
        check_script_locations,
        is_outside,
        scene_scripts,
    )
    from emberfx.model.scene import describe

    # Validate runs no script, but refuses what run and render would refuse.
    check_script_locations(scene, ScriptPolicy(allow_outside=args.allow_outside_scripts))
    print(describe(scene))
    scripts = scene_scripts(scene)
    if scripts:
        print(f"  {len(scripts)} script{'s' if len(scripts) != 1 else ''}, not run here (a scene "
              f"with scripts is a program: run and render execute them unless --no-scripts)")
    for script in scripts:
        outside = ", outside the scene's folder" if is_outside(scene, script) else ""
        print(f"    {script.owner}: {script.written} ({script.path}{outside})")
    print("ok")
    return 0


def cmd_render(args) -> int:
    from emberfx.app import compositing

    check_output_suffix(args.out, "--out", (".png", ".gif", ".mp4", ".mov", ".exr"))
    compositing.check_arguments(args)
    scene = for_adapter(_load(args.scene), args.quality)
    frames = args.frames or scene.settings.preview_steps()
    return _render(scene, frames, args.out, args.size,
                   scripts=script_policy_from_args(args), transparent=args.transparent,
                   depth=args.depth)


def cmd_run(args) -> int:
    from emberfx.app import window

    if args.screenshot is not None:
        check_output_suffix(args.screenshot, "--screenshot", (".png",))
    scene = for_adapter(_load(args.scene), args.quality)
    frames = args.frames or scene.settings.duration_steps()
    stem = Path(getattr(scene, "path", None) or args.scene).stem
    out = args.screenshot or Path(stem + ".mp4")
    headless = f"rendering {frames} frames headless to {out}"
    if not window.has_display():
        print(f"{PROG}: no display (DISPLAY/WAYLAND_DISPLAY unset or glfw cannot start); "
              f"{headless}", file=sys.stderr)
        return _render(scene, frames, out, scripts=script_policy_from_args(args))
    engine = _engine(scene, scripts=script_policy_from_args(args), announce=True)
    if not window.can_present(engine.adapter):
        print(f"{PROG}: the OpenGL adapter cannot show a window ({window.NO_PRESENT_HINT}); "
              f"{headless}", file=sys.stderr)
        return _render(scene, frames, out, engine=engine)
    try:
        window.run_window(engine, frames=args.frames, screenshot=args.screenshot)
    finally:
        engine.close()
    if args.screenshot is not None and args.screenshot.exists():
        print(f"wrote {args.screenshot}")
    return 0


def cmd_passes(args) -> int:
    from emberfx.engine.scripting import ScriptPolicy

    # An inspection command: the scene's scripts (programs) never run here.
    engine = _engine(_load(args.scene), PASSES_SIZE,
                     ScriptPolicy(run=False, off_reason="passes never runs scripts"))
    try:
        table = engine.pass_table()
    finally:
        engine.close()
    print(format_pass_table(table))
    return 0


def format_pass_table(table) -> str:
    """``passes``'s output: order, phase, name and what each pass does; then the phases' work
    that is no pass of its own (a host write, work folded into a pass, a copy after them)."""
    from emberfx.core.frame_graph import Folding

    rows = [("#", "phase", "pass", "what it does")]
    rows += [(str(i), p.phase.name, p.name, p.does) for i, p in enumerate(table.passes, 1)]
    widths = [max(len(row[k]) for row in rows) for k in range(3)]
    lines = [f"{a:>{widths[0]}}  {b:<{widths[1]}}  {c:<{widths[2]}}  {d}".rstrip()
             for a, b, c, d in rows]
    order = {p.name: i for i, p in enumerate(table.passes, 1)}
    if table.folded:
        lines += ["", "work without a pass of its own:"]
    for folded, name in table.folded:
        where = {Folding.HOST_WRITE: f"written with queue.write_buffer before the step, for "
                                     f"pass {order.get(name)} {name}",
                 Folding.IN_PASS: f"done by pass {order.get(name)} {name}",
                 Folding.AFTER_PASSES: "a copy the engine records after the passes"}[folded.how]
        lines.append(f"  {folded.phase.name:<8}  {folded.how.value:<10}  {folded.what} "
                     f"({where})")
    return "\n".join(lines)


def _limit(limits: dict, name: str):
    # wgpu-py spells limit keys with hyphens; accept both spellings.
    return limits.get(name, limits.get(name.replace("_", "-")))


def _fmt_bytes(n) -> str:
    if not isinstance(n, int) or n < 1024 * 1024:
        return str(n)
    return f"{n} ({n / 2**20:.0f} MiB)" if n < 2**30 else f"{n} ({n / 2**30:.1f} GiB)"


def _adapter_line(info: dict) -> str:
    name = info.get("device") or info.get("description") or info.get("name") or "?"
    return f"{name} ({info.get('backend_type', '?')}, {info.get('adapter_type', '?')})"


def cmd_info(args) -> int:
    from emberfx.core.gpu import describe_adapters

    d = describe_adapters()
    info, limits = dict(d["adapter"]), dict(d.get("limits", {}))
    print(f"adapter:  {info.get('device') or info.get('description') or '?'}")
    if info.get("description") and info.get("description") != info.get("device"):
        print(f"driver:   {info['description']}")
    print(f"backend:  {info.get('backend_type', '?')}")
    print(f"type:     {info.get('adapter_type', '?')}")
    if d.get("features"):
        print(textwrap.fill(", ".join(d["features"]), width=100, initial_indent="features: ",
                            subsequent_indent=" " * 10))
    print("limits:")
    for name in INFO_LIMITS:
        value = _limit(limits, name)
        shown = _fmt_bytes(value) if name.endswith("size") else value
        print(f"  {name:<40} {shown if value is not None else '?'}")
    others = [dict(a) for a in d.get("adapters", []) if dict(a) != info]
    print("other adapters:" if others else "other adapters: none")
    for a in others:
        print(f"  - {_adapter_line(a)}")
    if os.environ.get("EMBERFX_ADAPTER"):
        print(f"(chosen by EMBERFX_ADAPTER={os.environ['EMBERFX_ADAPTER']!r})")
    return 0


def cmd_sweep(args) -> int:
    from emberfx.sweeps import command as sweep_command

    return sweep_command.run(args)


def cmd_web(args) -> int:
    import os

    from emberfx.web import DEFAULT_FRAMES, write_web

    check_output_suffix(args.out, "--out", (".html", ".htm"))
    scene = _load(args.scene)
    frames = args.frames or DEFAULT_FRAMES
    path = write_web(scene, args.out, frames, args.size, scripts=script_policy_from_args(args))
    print(f"wrote {path} ({frames} steps, {os.path.getsize(path) / 1e6:.2f} MB)")
    return 0


def cmd_export(args) -> int:
    from emberfx.app import export

    return export.run(args)


def cmd_gallery(args) -> int:
    from emberfx.app import gallery_media

    return gallery_media.run(args)


def cmd_bench(args) -> int:
    from emberfx import bench

    unknown = [n for n in args.names if n not in bench.NAMES]
    if unknown and args.plot is None:
        raise UsageError(f"unknown benchmark {', '.join(map(repr, unknown))}; "
                         f"known: {', '.join(bench.NAMES)}")
    if args.from_file is not None and args.plot is None:
        raise UsageError("--from FILE redraws plots: give --plot DIR too")
    if args.plot is not None:
        return int(bench.plot_main(list(args.names), args.plot, bool(args.json),
                                   args.from_file) or 0)
    options = {"sweep": {"workers": args.workers, "ray": args.ray}}
    return int(bench.main(list(args.names), bool(args.json), options) or 0)


COMMANDS = {"run": cmd_run, "render": cmd_render, "validate": cmd_validate,
            "passes": cmd_passes, "info": cmd_info, "sweep": cmd_sweep, "export": cmd_export,
            "web": cmd_web, "gallery": cmd_gallery,
            "bench": cmd_bench}


def main(argv: list[str] | None = None) -> int:
    """The ``emberfx`` command (``argv`` None: ``sys.argv``, and the process ends even when a
    script left a thread running, see script_watchdog.finish_process). Ctrl-C and SIGTERM are
    handled from the first line (building the parser loads the families): exit 130 or 143, no
    traceback, no file left behind."""
    code = interrupts.run_command(lambda: run_command(argv), PROG)
    return code if argv is not None else finish_process(code)


def run_command(argv: list[str] | None = None) -> int:
    parser, subs = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: usage errors (2), --help/--version (0)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    try:
        run = COMMANDS.get(args.command) or registry.cli_commands()[args.command].run
        return run(args)
    except UsageError as exc:
        subs[args.command].print_usage(sys.stderr)
        print(f"{PROG}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except EmberError as exc:
        print(f"{PROG}: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `emberfx passes ... | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
