"""Every argument of every command has a description in --help."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

from emberfx.app import cli


def arguments(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("emberfx",)):
    """(command path, argument, help) for every argument of ``parser`` and its subcommands
    (the families' commands too: build_parser loads them), -h/--help left out."""
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:   # the command list of the parent's --help
                yield path, f"command {choice.dest}", choice.help
            for name, sub in action.choices.items():
                yield from arguments(sub, (*path, name))
            continue
        yield path, "/".join(action.option_strings) or action.metavar or action.dest, action.help


def test_every_argument_of_every_command_has_a_description():
    parser, subs = cli.build_parser()
    found = list(arguments(parser))
    commands = {name.removeprefix("command ") for _, name, _ in found
                if name.startswith("command ")}
    assert commands == set(subs) and {"render", "passes", "bench", "sweep", "export"} <= commands
    missing = [f"{' '.join(path)} {name}" for path, name, text in found
               if not isinstance(text, str) or not text.strip() or text == argparse.SUPPRESS]
    assert missing == []
    assert len(found) > 3 * len(subs)   # the walk reached the arguments, not only the commands


def test_render_help_describes_scene():
    done = subprocess.run([sys.executable, "-m", "emberfx", "render", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    section = done.stdout.split("positional arguments:")[1].split("options:")[0]
    line = re.search(r"^\s+SCENE(.*)$", section, re.M)
    assert line and "scene .toml file" in line[1], section
