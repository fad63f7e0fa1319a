"""Command-line argument types and checks shared by the CLI and the commands families register.

Kept apart from runtime/app/cli.py so a family's command (``registry.cli_command``) uses the same
argument types, script flags and output checks as the built-in commands without importing the
CLI. Nothing here imports the GPU stack.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from emberfx.core.errors import UsageError


def parse_size(text: str) -> tuple[int, int]:
    """'640x360' -> (640, 360). Strict: digits, 'x', digits, both positive."""
    m = re.fullmatch(r"([0-9]+)[xX]([0-9]+)", text.strip())
    if not m or int(m[1]) < 1 or int(m[2]) < 1:
        raise argparse.ArgumentTypeError(f"expected WxH with positive integers (e.g. 640x360), "
                                         f"got '{text}'")
    return int(m[1]), int(m[2])


def positive_int(text: str) -> int:
    if not re.fullmatch(r"\+?[0-9]+", text.strip()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got '{text}'")
    return int(text)


def seconds(text: str) -> float:
    """A time limit: a number of seconds >= 0 (0: no limit)."""
    if not re.fullmatch(r"\+?([0-9]+\.?[0-9]*|\.[0-9]+)", text.strip()):
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0 (0: no limit), "
                                         f"got '{text}'")
    return float(text)


def add_script_flags(s: argparse.ArgumentParser, run_flags: bool = True) -> None:
    """The flags that say whether and how a scene's scripts (Python code) may run."""
    if run_flags:
        s.add_argument("--no-scripts", action="store_true",
                       help="run none of the scene's scripts (also: EMBERFX_NO_SCRIPTS=1)")
        s.add_argument("--script-timeout", type=seconds, metavar="S",
                       help="stop a script hook that runs longer than S seconds and skip its "
                            "script (default: 5; 0: no limit)")
    s.add_argument("--allow-outside-scripts", action="store_true",
                   help="allow scripts outside the scene file's folder")


def script_policy_from_args(args: argparse.Namespace):
    """What a command's script flags allow (EMBERFX_NO_SCRIPTS=1 is applied by the Engine);
    a flag the command does not define keeps its default."""
    from emberfx.engine.scripting import DEFAULT_SCRIPT_TIMEOUT, ScriptPolicy

    timeout = getattr(args, "script_timeout", None)
    return ScriptPolicy(run=not getattr(args, "no_scripts", False),
                        timeout=DEFAULT_SCRIPT_TIMEOUT if timeout is None else timeout,
                        allow_outside=getattr(args, "allow_outside_scripts", False),
                        off_reason="--no-scripts")


def check_output_suffix(path: Path, flag: str, allowed: tuple[str, ...]) -> None:
    """Reject a bad output extension before minutes of rendering, not after."""
    if path.suffix.lower() not in allowed:
        raise UsageError(f"{flag} {path}: the file must end in {', '.join(allowed)}")


def write_text_atomically(path: Path, text: str) -> None:
    """Write atomically: a temp file next to ``path``, then os.replace; one-line errors."""
    from emberfx.app.output import write_atomically

    write_atomically(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8", newline="\n"))
