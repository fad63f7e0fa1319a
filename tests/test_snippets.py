"""Every code block of README.md and docs/**/*.md does what the page says it does.

- ```python blocks run on their own as scripts, each in a subprocess (this interpreter), headless
  (DISPLAY and WAYLAND_DISPLAY removed), with a time limit. The working folder is a fresh
  temporary folder holding a copy of the repository's scenes/ folder: paths a clone has
  (``"scenes/fountain.toml"``) resolve, and the files a snippet writes stay out of the repository.
  A run fails on a non-zero exit, a traceback or a script error on stderr.
- Blocks that are files a scene uses (``title="scripts/x.py"``, ``title="modifiers/x.wgsl"``) are
  written beside the nearest whole-scene ```toml block of their page that names them, in a copy
  of scenes/, and that scene is built and stepped a few frames in a subprocess.
- ```toml blocks parse with tomllib; a whole scene (``[scene]`` or ``[[entity]]``) validates
  through emberfx.load_scene, written into a copy of scenes/ so the relative paths it names
  (patterns/, volumes/, modifiers/, scripts/) resolve.
- ```sh and ```console blocks: every ``emberfx ...`` command parses with the CLI's own parser
  (nothing is run).
- ``<!-- excerpt: PATH -->`` blocks are checked against the file they quote.
- ``<!-- notebook -->`` blocks run in tests/test_notebook.py.

The marker conventions are spelled out in tests/snippet_support.py.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from snippet_support import (
    PAGES,
    ROOT,
    Block,
    all_blocks,
    clone_folder,
    file_blocks,
    python_programs,
    scene_folder,
    scene_for,
    write_named_files,
)

TIMEOUT_S = 600          # one snippet on lavapipe, a 2-core CPU shared with other work
STEPS = 4                # steps a titled file's scene runs
# checked as above, or shown only (console output, text, data listings)
KNOWN_LANGS = {"python", "py", "toml", "wgsl", "sh", "bash", "console", "text", "json", "yaml", ""}

STEP_SCENE = f"""
import sys
import emberfx

scene = emberfx.load_scene(sys.argv[1])
with emberfx.Engine(scene, size=(96, 54)) as engine:
    engine.step({STEPS})
    image = engine.render()
    assert image.shape == (54, 96, 4), image.shape
    print("stepped", engine.clock.steps)
"""


def headless_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(name, None)
    env["MPLBACKEND"] = "Agg"
    return env


def run_python(args: list[str], cwd: Path, what: str) -> subprocess.CompletedProcess:
    try:
        done = subprocess.run([sys.executable, *args], cwd=cwd, env=headless_env(),
                              capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{what}: still running after {TIMEOUT_S} s")
    tail = (done.stdout[-2000:] + "\n" + done.stderr[-4000:]).strip()
    assert done.returncode == 0, f"{what}: exit status {done.returncode}\n{tail}"
    for sign in ("Traceback (most recent call last)", "emberfx: script error"):
        assert sign not in done.stderr, f"{what}: {sign!r} on stderr\n{tail}"
    return done


def by_id(found: list[Block]) -> dict:
    return {"argvalues": found, "ids": [b.id for b in found]}


# ------------------------------------------------------------------------------------- python

@pytest.mark.parametrize("block", **by_id(python_programs()))
def test_python_block_runs_as_a_script(block: Block, tmp_path, gpu):
    folder = clone_folder(tmp_path)
    (folder / "snippet.py").write_text(block.text, encoding="utf-8")
    run_python(["snippet.py"], folder, block.id)


@pytest.mark.parametrize("block", **by_id(file_blocks()))
def test_file_block_runs_in_the_scene_that_names_it(block: Block, tmp_path, gpu):
    assert block.lang in ("python", "py", "wgsl"), \
        f"{block.id}: a titled block must be Python or WGSL, found {block.lang!r}"
    scene = scene_for(block)
    assert scene is not None, (f"{block.id}: no whole-scene ```toml block on "
                               f"{block.page.name} names {block.title!r}")
    folder = scene_folder(tmp_path / "scene")
    for file in write_named_files(scene, folder):
        if file.lang in ("python", "py"):
            compile(file.text, f"{file.id} ({file.title})", "exec")
    (folder / "snippet.toml").write_text(scene.text, encoding="utf-8")
    done = run_python(["-c", STEP_SCENE, str(folder / "snippet.toml")], folder,
                      f"{block.id} in the scene at {scene.id}")
    assert f"stepped {STEPS}" in done.stdout


# --------------------------------------------------------------------------------------- toml

TOML_BLOCKS = [b for b in all_blocks() if b.lang == "toml"]


@pytest.mark.parametrize("block", **by_id(TOML_BLOCKS))
def test_toml_block_parses_and_a_whole_scene_validates(block: Block, tmp_path):
    try:
        tomllib.loads(block.text)
    except tomllib.TOMLDecodeError as exc:
        pytest.fail(f"{block.id}: not TOML: {exc}")
    if not block.is_scene:
        return
    import emberfx
    from emberfx.core.errors import EmberError

    folder = scene_folder(tmp_path)
    write_named_files(block, folder)
    path = folder / "snippet.toml"
    path.write_text(block.text, encoding="utf-8")
    try:
        emberfx.load_scene(path)
    except EmberError as exc:
        pytest.fail(f"{block.id}: the scene does not validate: {exc}")


# ---------------------------------------------------------------------------------- shell, CLI

def emberfx_commands(text: str) -> list[list[str]]:
    """The argument lists of every ``emberfx`` command in a shell or console block."""
    commands = []
    for line in text.replace("\\\n", " ").splitlines():
        line = line.strip()
        if line.startswith("$ "):
            line = line[2:]
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.commenters = "#"
        lexer.whitespace_split = True
        current: list[str] = []
        redirected = False   # after > or <, the words are file names, not arguments
        for token in [*lexer, "&&"]:
            if token in ("&&", "||", "|", ";", "&"):
                if current[:1] == ["emberfx"]:
                    commands.append(current[1:])
                current, redirected = [], False
            elif token in (">", ">>", "<", "2>", ">&"):
                redirected = True
            elif not redirected:
                current.append(token)
    return commands


SHELL_BLOCKS = [b for b in all_blocks() if b.lang in ("sh", "bash", "console")
                and emberfx_commands(b.text)]


@pytest.mark.parametrize("block", **by_id(SHELL_BLOCKS))
def test_emberfx_commands_parse(block: Block):
    from emberfx.app.cli import build_parser

    for args in emberfx_commands(block.text):
        parser, _ = build_parser()
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                parser.parse_args(args)
            except SystemExit as exc:
                assert exc.code in (0, None), \
                    f"{block.id}: `emberfx {shlex.join(args)}` does not parse: {err.getvalue()}"


def test_emberfx_commands_are_found():
    # the parser test above sees every command: a command split over lines, after a prompt
    # or inside a chain of && is found and nothing else is
    text = ("$ emberfx render a.toml \\\n  --frames 3 --out x.png  # c\n"
            "pip x && emberfx info | head\nemberfx bench --json > b.json\n")
    assert emberfx_commands(text) == [["render", "a.toml", "--frames", "3", "--out", "x.png"],
                                      ["info"], ["bench", "--json"]]


# ----------------------------------------------------------------------------- excerpts, langs

EXCERPTS = [b for b in all_blocks() if b.marker == "excerpt"]


@pytest.mark.parametrize("block", **by_id(EXCERPTS))
def test_excerpt_quotes_its_file(block: Block):
    assert block.marker_value, f"{block.id}: <!-- excerpt: PATH --> names no file"
    source = ROOT / block.marker_value
    assert source.is_file(), f"{block.id}: {block.marker_value} does not exist"
    haystack = [line.strip() for line in source.read_text(encoding="utf-8").splitlines()]
    runs: list[list[str]] = [[]]
    for line in block.text.splitlines():
        if line.strip() in ("...", "# ...", "// ..."):
            runs.append([])
        elif line.strip():
            runs[-1].append(line.strip())
    for run in filter(None, runs):
        n = len(run)
        assert any(haystack[i:i + n] == run for i in range(len(haystack) - n + 1)), \
            f"{block.id}: not in {block.marker_value}:\n" + "\n".join(run)


def test_every_block_is_of_a_checked_kind():
    for block in all_blocks():
        assert block.lang in KNOWN_LANGS, f"{block.id}: unknown block language {block.lang!r}"
        if block.lang == "wgsl":
            assert block.title, f"{block.id}: a ```wgsl block needs title=\"FILE.wgsl\""
        if block.marker in ("notebook",):
            assert block.lang in ("python", "py"), f"{block.id}: a notebook cell is Python"


def test_the_pages_have_runnable_blocks():
    # the collection is not empty by accident (a page moved, a fence misread)
    assert (ROOT / "README.md") in PAGES and len(PAGES) > 1
    assert any(b.page.name == "README.md" for b in python_programs())
    assert any(b.is_scene for b in TOML_BLOCKS)


def test_readme_is_a_quickstart():
    # the manual lives in docs/; the README stays a page a newcomer reads to the end
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines (a quickstart has at most 250)"
    assert sum("<!-- test-command -->" in line for line in lines) == 1   # .ci/run reads it
