"""Bounds on an emitter's user WGSL (modifier files, expression fields, custom attributes),
checked before anything compiles it: past them the compiler crashed the process (SIGSEGV) or
ran for minutes. Each hostile case ends in one line stating the bound, from `emberfx validate`
and `emberfx render` in a subprocess; the largest programs inside the bounds compile and run
on the GPU; the tokenizer reads comments, comparisons and templates as WGSL does."""

from __future__ import annotations

import subprocess
import sys

import pytest

from emberfx.core.errors import SceneError
from emberfx.core.wgsl_bounds import (
    MAX_ARRAY_BYTES,
    MAX_NESTING,
    MAX_SOURCE_BYTES,
    MAX_STATEMENT_TOKENS,
    BoundError,
    check_wgsl_bounds,
)
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.systems.emitter.attributes import MAX_ATTRIBUTE_BYTES, MAX_ATTRIBUTES

INIT = "fn init(p: ptr<function, ParticleState>, ctx: ModifierContext) {{\n{}\n}}\n"
UPDATE = "fn update(p: ptr<function, ParticleState>, ctx: ModifierContext) {{\n{}\n}}\n"
HEAD = '[[entity]]\nname = "jet"\n[entity.emitter]\ncapacity = 64\nrate = 500.0\n'


def cli(*argv, timeout=300):
    done = subprocess.run([sys.executable, "-m", "emberfx", *map(str, argv)],
                          capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stderr


def hostile_cases(folder):
    """(scene path, field, words of the bound) for each case the red team found."""
    files = {
        "parens.wgsl": INIT.format("    (*p).position.y += " + "(" * 5000 + "1.0"
                                   + ")" * 5000 + ";"),
        "private.wgsl": "var<private> big: array<f32, 100000000>;\n" + UPDATE.format(
            "    big[ctx.slot % 100000000u] = 1.0;\n    (*p).position.y += big[0];"),
        "function.wgsl": UPDATE.format("    var a: array<vec4f, 1000000>;\n"
                                       "    a[ctx.slot % 1000000u] = vec4f(1.0);\n"
                                       "    (*p).position.y += a[0].x;"),
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    many = ", ".join(f'a{i} = "vec4f"' for i in range(4000))
    scenes = {
        "init_parens": ('init = "parens.wgsl"', "emitter.init",
                        f"at most {MAX_NESTING} levels of nesting", "found 5,001",
                        "line 2 of"),
        "size_parens": ('size = "' + "(" * 5000 + "0.01" + ")" * 5000 + '"', "emitter.size",
                        f"at most {MAX_NESTING} levels of nesting", "found 5,000"),
        "size_terms_20k": ('size = "0.01' + " + 0.0001" * 20000 + '"', "emitter.size",
                           f"at most {MAX_SOURCE_BYTES:,} bytes of WGSL"),
        "size_terms_5k": ('size = "t' + " + t" * 5000 + '"', "emitter.size",
                          f"at most {MAX_STATEMENT_TOKENS:,} tokens", "found 10,001"),
        "private_array": ('update = "private.wgsl"', "emitter.update",
                          f"at most {MAX_ARRAY_BYTES:,} bytes of fixed-size arrays",
                          "array<f32, 100000000>", "400,000,000 bytes"),
        "function_array": ('update = "function.wgsl"', "emitter.update",
                           f"at most {MAX_ARRAY_BYTES:,} bytes", "array<vec4f, 1000000>",
                           "16,000,000 bytes"),
        "attributes": (f"attributes = {{ {many} }}", "emitter.attributes",
                       f"at most {MAX_ATTRIBUTES} custom attributes", "found 4,000"),
    }
    out = []
    for case, (field_text, *expected) in scenes.items():
        path = folder / f"{case}.toml"
        path.write_text(HEAD + field_text + "\n")
        out.append((path, expected))
    return out


def test_validate_refuses_each_hostile_program_in_one_line_stating_the_bound(tmp_path):
    for path, (field, *words) in hostile_cases(tmp_path):
        code, err = cli("validate", path)
        lines = err.strip().splitlines()
        assert code == 1 and len(lines) == 1, (path.name, code, err[-2000:])
        assert f"{path.name}: entity 'jet': {field}: expected" in lines[0]
        for word in words:
            assert word in lines[0], (word, lines[0])


@pytest.mark.parametrize("case", ["init_parens", "private_array"])
def test_render_refuses_before_compiling(gpu, tmp_path, case):
    """The crash was in the render's shader creation (SIGSEGV, exit -11)."""
    path = next(p for p, _ in hostile_cases(tmp_path) if p.stem == case)
    code, err = cli("render", path, "--frames", "1", "--size", "32x32", "--out",
                    tmp_path / "x.png")
    assert code == 1, (code, err[-2000:])
    assert len(err.strip().splitlines()) == 1 and "emitter." in err
    assert not (tmp_path / "x.png").exists()


def test_a_hot_reload_to_a_hostile_file_keeps_the_last_good_program(gpu, tmp_path):
    """The Engine's run-time path (Program) reads the file through the same check."""
    (tmp_path / "lift.wgsl").write_text(UPDATE.format("    (*p).velocity.y += ctx.dt;"))
    path = tmp_path / "scene.toml"
    path.write_text(HEAD + 'update = "lift.wgsl"\n')
    with Engine(loads_scene(path.read_text(), path=path), size=(16, 16)) as engine:
        engine.step(2)
        system = engine.system_of("jet", "emitter")
        before = system.pools["jet"].program
        (tmp_path / "lift.wgsl").write_text("var<private> big: array<f32, 100000000>;\n"
                                            + UPDATE.format("    big[0] = 1.0;"))
        with pytest.raises(SceneError, match=r"emitter.update: expected at most 4,096 bytes"):
            system.rebuild(engine.entity_ref("jet"), engine.components_of("jet")["emitter"])
        assert system.pools["jet"].program is before
        engine.step(2)


def test_programs_at_the_bounds_compile_and_run(gpu, tmp_path):
    """What the bounds allow, at each bound: nesting MAX_NESTING deep (a chain under the token
    bound), a MAX_ARRAY_BYTES function array and MAX_ATTRIBUTES attributes of
    MAX_ATTRIBUTE_BYTES together compile and step (margin: 2,000 parentheses or 10,000 terms
    compiled where the crash began)."""
    deep = "(" * (MAX_NESTING - 1) + "0.01" + ")" * (MAX_NESTING - 1)
    chain = "0.01" + " + 0.0 * t" * ((MAX_STATEMENT_TOKENS - 1) // 4)
    count = MAX_ARRAY_BYTES // 16
    (tmp_path / "table.wgsl").write_text(UPDATE.format(
        f"    var table: array<vec4f, {count}>;\n"
        f"    table[ctx.slot % {count}u] = vec4f(ctx.dt);\n"
        f"    (*p).velocity.y += table[ctx.slot % {count}u].x;"))
    attributes = ", ".join(f'a{i} = "vec4f"' for i in range(MAX_ATTRIBUTE_BYTES // 16))
    assert MAX_ATTRIBUTE_BYTES // 16 <= MAX_ATTRIBUTES
    for extra in (f'size = "{deep}"', f'size = "{chain}"',
                  f'update = "table.wgsl"\nattributes = {{ {attributes} }}'):
        check = extra.split('"')[1]
        if not check.endswith(".wgsl"):
            check_wgsl_bounds(check)   # at the bound, not past it
        path = tmp_path / "scene.toml"
        path.write_text(HEAD + extra + "\n")
        with Engine(loads_scene(path.read_text(), path=path), size=(16, 16)) as engine:
            engine.step(2)
            engine.render()
            assert engine.stats()["entities"]["jet"]["alive"] > 0


@pytest.mark.parametrize("text", [
    "/* ((( /* nested ((( */ ((( */ fn f() {} // ((((((((",   # comments hold no code
    "fn f() { if (a < b && c > d) { let x = vec3<f32>(1.0); } }",   # comparisons, templates
    "fn f() -> f32 { return a - b - -c * -d; }",
    "var<private> lut: array<array<f32, 32>, 32>;",             # 4 KiB: within the bound
    "const N = 0x40u; var<private> lut: array<vec4f, N>;",       # a const holding a literal
])
def test_ordinary_wgsl_is_within_the_bounds(text):
    check_wgsl_bounds(text)


@pytest.mark.parametrize("text,words", [
    ("fn f() { let x = " + "- " * MAX_NESTING + "1.0; }", "levels of nesting"),
    ("var<private> x: " + "array<" * 300 + "f32" + ", 1>" * 300 + ";", "levels of nesting"),
    ("fn f() { " + "{" * (MAX_NESTING + 1) + "}" * (MAX_NESTING + 1) + " }", "levels of nesting"),
    ("const N = 10u; var<private> a: array<f32, N * 2>;", "an integer literal, or a const"),
    ("struct Big { a: array<f32, 600> }; var<private> x: Big; var<private> y: Big;",
     "bringing them to 4,800 bytes"),
    ("struct S { a: vec4f, b: f32 }; var<private> x: array<S, 1000>;", "32,000 bytes"),
    ("var<private> a: array<array<vec3f, 64>, 64>;", "65,536 bytes"),
])
def test_hostile_wgsl_is_refused(text, words):
    with pytest.raises(BoundError, match=words.replace("(", r"\(")):
        check_wgsl_bounds(text)


def test_shipped_modifiers_are_well_within_the_bounds(scenes_dir):
    for path in sorted((scenes_dir / "modifiers").glob("*.wgsl")):
        check_wgsl_bounds(path.read_text())
