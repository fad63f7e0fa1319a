"""The command-line reference page (docs/reference/cli.md), generated from the ``emberfx``
argument parser: every subcommand (families' own included), its usage line and every argument
with its help.

    python -m emberfx.app.docs_pages docs/      # writes it, with the other generated pages

tests/test_docs_reference.py regenerates the page in memory and fails when the committed one
differs. argparse offers no public list of a parser's arguments; its ``_actions`` list is the
one its own help formatter reads, and is stable across Python versions, unlike the layout of
the help text (so the usage lines are written here, one line each).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from emberfx.app.cli import PROG, build_parser

__all__ = ["cli_reference"]

PAGE = Path("reference") / "cli.md"
"""where the page goes, relative to the docs folder"""

INTRO = f"""\
# Command line

`{PROG} COMMAND ...`; `{PROG} COMMAND --help` prints the same help in the terminal. A scene argument
is a path to a `.toml` file, or the name of a scene bundled with emberfx (`fountain`,
`showcase`, ...) from any folder.

Exit status: 0 ok; 1 a mistake in the input or the environment, printed as one line
`{PROG}: error: ...`; 2 a usage error (the usage line, then the message); 130 interrupted
(Ctrl-C).

This page is generated from the argument parser by `python -m emberfx.app.docs_pages docs/`;
do not edit it by hand.
"""


def _cell(text: str) -> str:
    text = " ".join(str(text).split())
    return text.replace("&", "&amp;").replace("<", "&lt;").replace("|", "\\|")


def _help(action: argparse.Action, prog: str) -> str:
    text = action.help or ""
    if "%" in text:   # argparse's own expansion: %(default)s, %(prog)s ...
        text = text % {**vars(action), "prog": prog}
    return text


def _name(action: argparse.Action) -> str:
    """The argument as written: '--frames N', '--ray [ADDRESS]', 'SCENE', 'NAME ...'."""
    metavar = action.metavar or (action.dest.upper() if action.option_strings else action.dest)
    if not action.option_strings:
        if action.nargs in ("*", "+"):
            return f"{metavar} ..."
        return str(metavar)
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return names
    if action.nargs == "?":
        return f"{names} [{metavar}]"
    return f"{names} {metavar}"


def _usage_item(action: argparse.Action) -> str:
    text = _name(action).split(", ")[-1] if action.option_strings else _name(action)
    if action.option_strings and action.nargs != 0:
        text = f"{action.option_strings[0]} {text.split(' ', 1)[1]}"
    elif action.option_strings:
        text = action.option_strings[0]
    optional = (not action.required if action.option_strings
                else action.nargs in ("*", "?"))
    return f"[{text}]" if optional else text


def _default(action: argparse.Action) -> str:
    if action.required and action.nargs not in ("?", "*"):
        return "required"
    value = action.default
    if value is None or value is argparse.SUPPRESS or value is False or value == []:
        return ""
    return f"`{value}`"


def _documented(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's arguments but --help and the subcommands."""
    return [a for a in parser._actions
            if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
            and a.help is not argparse.SUPPRESS]


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    actions = _documented(parser)
    if not actions:
        return ["No arguments.", ""]
    lines = ["| Argument | Default | Description |", "| --- | --- | --- |"]
    for action in actions:
        help_text = _help(action, parser.prog)
        if action.choices is not None and not isinstance(action.choices, dict):
            help_text += f" (one of: {', '.join(map(str, action.choices))})"
        if action.nargs in ("*", "+"):
            help_text += " (several may be given)"
        lines.append(f"| `{_name(action)}` | {_cell(_default(action))} | {_cell(help_text)} |")
    return [*lines, ""]


def _usage(parser: argparse.ArgumentParser) -> str:
    """One usage line: options first, then positionals, as argparse orders them."""
    actions = _documented(parser)
    options = [_usage_item(a) for a in actions if a.option_strings]
    positionals = [_usage_item(a) for a in actions if not a.option_strings]
    if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
        positionals.append("COMMAND ...")
    return " ".join([parser.prog, *options, *positionals])


def cli_reference() -> str:
    """The whole page, as Markdown."""
    parser, subs = build_parser()
    lines = [INTRO, "| Command | What it does |", "| --- | --- |"]
    lines += [f"| [`{name}`](#{name}) | {_cell(sub.description or '')} |"
              for name, sub in subs.items()]
    lines += ["", f"## `{PROG}`", "", "```text", _usage(parser), "```", ""]
    lines += _arguments(parser)
    for name, sub in subs.items():
        lines += [f"## `{name}` {{#{name}}}", "", sub.description or "", ""]
        lines += ["```text", _usage(sub), "```", ""]
        lines += _arguments(sub)
    return "\n".join(lines).rstrip("\n") + "\n"
