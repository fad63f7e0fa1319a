"""``emberfx life PATTERN --gens N``: run a Life pattern headless and print its population.

The Life family's command line (registered with ``registry.cli_command``): the pattern is placed
in the middle of a grid, run on the GPU for N generations, and the final grid can be written as
RLE (the cells) or PNG (the rendered image). Heavy modules (the engine, wgpu) load only when the
command runs, so ``emberfx --help`` stays fast.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from emberfx.app.arguments import (
    check_output_suffix,
    parse_size,
    positive_int,
    script_policy_from_args,
    write_text_atomically,
)
from emberfx.core.errors import EmberError
from emberfx.model.registry import cli_command

MIN_SIDE = 64      # smallest default grid side, in cells
MAX_RENDER = 1024  # largest render target side (the grid itself may be larger)
CHUNK = 64         # generations per Engine.step (Life's steps_per_frame)
ENTITY = "life"    # the one entity of the scene the command builds


def life_rule(text: str) -> str:
    """A Life-like rule ('B3/S23', 'b36s23', MCell '23/3'), kept as written."""
    from emberfx.systems.life.rules import parse_rule

    try:
        parse_rule(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("pattern", metavar="PATTERN", help="pattern file: .rle or .cells")
    s.add_argument("--gens", type=positive_int, required=True, metavar="N",
                   help="generations to run")
    s.add_argument("--size", type=parse_size, metavar="WxH",
                   help=f"grid size in cells (default: the pattern's size times 2, at least "
                        f"{MIN_SIDE} per side); the pattern is centred")
    s.add_argument("--rule", type=life_rule, metavar="R",
                   help="Life-like rule, e.g. B3/S23, b36s23 or 23/3 (default: the RLE "
                        "header's rule, else B3/S23)")
    s.add_argument("--topology", choices=("torus", "dead"), default="torus",
                   help="torus wraps the edges; dead: cells beyond them are dead (default: torus)")
    s.add_argument("--memory", choices=("pingpong", "inplace"), default="pingpong",
                   help="state buffers: two, or one with tiles and halos (default: pingpong)")
    s.add_argument("--out", type=Path, metavar="FILE",
                   help="write the final grid: .rle (cells) or .png (the rendered image)")
    s.add_argument("--no-scripts", action="store_true",
                   help="run no scripts (a pattern has none; accepted like run and render)")


def check_out(out: Path) -> None:
    """Refuse an output the run could not write, before the run, not after it."""
    check_output_suffix(out, "--out", (".rle", ".png"))
    if not out.parent.is_dir():
        raise EmberError(f"cannot write {out}: folder {out.parent} does not exist")
    if out.is_dir():
        raise EmberError(f"cannot write {out}: it is a folder")


def run(args: argparse.Namespace) -> int:
    if args.out is not None:
        check_out(args.out)
    from emberfx.app.headless import build_engine
    from emberfx.model.camera import Camera
    from emberfx.model.scene import EntitySpec, Scene, SceneSettings
    from emberfx.systems.life.component import Life
    from emberfx.systems.life.patterns import read_pattern, write_rle
    from emberfx.systems.life.rules import parse_rule, rule_name

    path = Path(args.pattern)
    pattern = read_pattern(path)   # PatternError names the file, line and column
    w, h = pattern.size
    width, height = args.size or (max(MIN_SIDE, 2 * w), max(MIN_SIDE, 2 * h))
    if w > width or h > height:
        raise EmberError(f"{path}: the {w}x{h} pattern does not fit the {width}x{height} grid "
                         f"(--size {width}x{height})")
    rule = args.rule or pattern.rule or "B3/S23"
    gens = args.gens
    chunk = min(gens, CHUNK)
    try:
        life = Life(size=(width, height), rule=rule, topology=args.topology, memory=args.memory,
                    pattern=str(path.resolve()), offset=None, steps_per_frame=chunk)
    except ValueError as exc:
        raise EmberError(f"{path}: {exc}") from None
    render_size = (min(width, MAX_RENDER), min(height, MAX_RENDER))
    scene = Scene(SceneSettings(name=f"life {path.name}", size=render_size),
                  Camera(kind="orthographic"), [EntitySpec(ENTITY, {"life": life})], path=None)
    engine = build_engine(scene, render_size, announce=False,
                          scripts=script_policy_from_args(args))
    try:
        engine.step(gens // chunk)            # chunk generations per step
        if gens % chunk:
            engine.entity(ENTITY).life.steps_per_frame = gens % chunk   # a live field
            engine.step(1)
        cells = engine.state(ENTITY)["cells"]
        if args.out is not None and args.out.suffix.lower() == ".png":
            from emberfx.app.output import write_png

            write_png(args.out, engine.render())
            print(f"wrote {args.out} ({render_size[0]}x{render_size[1]})")
    finally:
        engine.close()
    if args.out is not None and args.out.suffix.lower() == ".rle":
        text = write_rle(cells, rule=rule_name(*parse_rule(rule)), name=pattern.name)
        write_text_atomically(args.out, text)
        print(f"wrote {args.out} ({width}x{height} cells)")
    print(f"population {int(cells.sum())}")
    return 0


cli_command("life", "run a Life pattern headless for N generations and print its population",
            add_arguments, run)
