"""Compute runs recorded through wgpu-native's C functions (core/native_calls.py): the same
commands as through wgpu-py's methods, the same bytes out, errors still raised, and a switch
that turns them off."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import wgpu

from emberfx.core import frame_plan, native_calls
from emberfx.core.frame_graph import Dispatch, FrameGraph, Pass, Phase, RenderTarget
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene

SIZE = (96, 54)
STEPS = 12

pytestmark = pytest.mark.skipif(not native_calls.AVAILABLE,
                                reason="wgpu-py without wgpu-native's C functions")


def run_sampler(scenes_dir, native: bool, monkeypatch) -> tuple[dict, np.ndarray]:
    """The sampler's state and picture after STEPS frames, with native calls on or off."""
    monkeypatch.setattr(native_calls, "enabled", native)
    with Engine(load_scene(scenes_dir / "sampler.toml"), size=SIZE, scripts=False) as engine:
        output = engine.device.create_texture(size=(*SIZE, 1), format="rgba8unorm-srgb",
                                              usage=wgpu.TextureUsage.RENDER_ATTACHMENT)
        for _ in range(STEPS):
            with engine.frame():   # the step's compute pass continues into the draw's
                engine.step(1)
                engine.draw_to(output)
        output.destroy()
        states = {name: engine.state(name)
                  for name in ("fountain", "gold", "rockets", "flag", "life", "swarm")}
        return states, engine.render()


def test_native_and_wrapped_calls_give_the_same_bytes(gpu, scenes_dir, monkeypatch):
    """Emitters (batched and lone, with events), cloth, Life, particle life and post effects:
    every state array and the rendered picture equal byte for byte."""
    native_states, native_picture = run_sampler(scenes_dir, True, monkeypatch)
    wrapped_states, wrapped_picture = run_sampler(scenes_dir, False, monkeypatch)
    assert native_states.keys() == wrapped_states.keys()
    for name, fields in native_states.items():
        assert fields.keys() == wrapped_states[name].keys(), name
        for field, array in fields.items():
            assert array.tobytes() == wrapped_states[name][field].tobytes(), (name, field)
    assert native_picture.tobytes() == wrapped_picture.tobytes()
    assert native_picture.std() > 0   # the picture shows something


def one_step_commands(scenes_dir, monkeypatch, native: bool) -> tuple[list[tuple], int]:
    """The compute-pass commands of the sampler's fifth step, recorded at the C functions
    (native) or at wgpu-py's methods (wrapped). Pipelines, bind groups and buffers appear as
    the order in which the step first named them, so two Engines' logs compare. Also: how many
    compute commands went through wgpu-py's methods while the native ones were recorded."""
    log: list[tuple] = []
    through_methods: list[str] = []
    named: dict[object, int] = {}

    def first(handle) -> int:
        return named.setdefault(handle, len(named))

    monkeypatch.setattr(native_calls, "enabled", native)
    with Engine(load_scene(scenes_dir / "sampler.toml"), size=SIZE, scripts=False) as engine:
        # recording from the start: a run resolves its fixed commands' C functions when it
        # first replays natively
        if native:
            kinds = (("_SET_PIPELINE", "pipeline"), ("_SET_BIND_GROUP", "group"),
                     ("_DISPATCH", "dispatch"), ("_DISPATCH_INDIRECT", "indirect"))
            for name, kind in kinds:
                original = getattr(native_calls, name)

                def native_call(handle, *a, kind=kind, f=original):
                    log.append((kind, a))
                    return f(handle, *a)
                monkeypatch.setattr(native_calls, name, native_call)
        compute = wgpu.backends.wgpu_native.GPUComputePassEncoder
        for name, kind in (("set_pipeline", "pipeline"), ("set_bind_group", "group"),
                           ("dispatch_workgroups", "dispatch"),
                           ("dispatch_workgroups_indirect", "indirect")):
            original = getattr(compute, name)

            def method(self, *a, kind=kind, f=original):
                (through_methods.append(kind) if native else log.append((kind, a)))
                return f(self, *a)
            monkeypatch.setattr(compute, name, method)
        engine.step(4)
        log.clear()
        through_methods.clear()
        engine.step(1)
        monkeypatch.undo()
    out: list[tuple] = []
    for kind, a in log:
        if kind == "pipeline":
            out.append((kind, first(a[0] if native else a[0]._internal)))
        elif kind == "group":
            out.append((kind, a[0], first(a[1] if native else a[1]._internal)))
        elif kind == "dispatch":
            out.append((kind, *a, *(1,) * (3 - len(a))))
        else:
            out.append((kind, first(a[0] if native else a[0]._internal), a[1]))
    return out, len(through_methods)


def test_the_native_path_records_the_same_commands(gpu, scenes_dir, monkeypatch):
    """One step's compute commands, in order, with the same objects and counts, through either
    path: none of them goes through wgpu-py's methods while native calls are on."""
    native, native_through_methods = one_step_commands(scenes_dir, monkeypatch, native=True)
    wrapped, _ = one_step_commands(scenes_dir, monkeypatch, native=False)
    kinds = [c[0] for c in native]
    assert kinds.count("dispatch") > 10 and kinds.count("pipeline") > 5, kinds
    assert native == wrapped
    assert native_through_methods == 0


def test_a_native_command_that_is_invalid_raises_when_the_encoder_finishes(gpu):
    """wgpu-core reports an invalid pass command at finish; wgpu-py raises it there, so an
    error recorded through the C functions still reaches Python as a GPUValidationError
    (the process goes on)."""
    device = gpu.device
    module = device.create_shader_module(code=(
        "@group(0) @binding(0) var<storage, read_write> a: array<u32>;\n"
        "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) i: vec3u) {\n"
        "  if (i.x < arrayLength(&a)) { a[i.x] += 1u; } }"))
    one, other = (device.create_compute_pipeline(layout="auto",
                                                 compute={"module": module, "entry_point": "main"})
                  for _ in range(2))
    buffer = device.create_buffer(size=256, usage=wgpu.BufferUsage.STORAGE)
    foreign = device.create_bind_group(layout=other.get_bind_group_layout(0),
                                       entries=[{"binding": 0, "resource": {"buffer": buffer}}])
    graph = FrameGraph([Pass("x:bad", Phase.SIMULATE, Dispatch(one, (foreign,), groups=(1, 1, 1)),
                             writes=("a",))])
    encoder = device.create_command_encoder()
    assert native_calls.enabled
    graph.encode(encoder, {})
    with pytest.raises(wgpu.GPUValidationError, match="not compatible"):
        encoder.finish()
    buffer.destroy()


def test_a_native_render_pass_reports_an_incompatible_bundle_when_the_encoder_finishes(gpu):
    """A render pass begun through the C functions with a bundle recorded for another colour
    format: GPUValidationError at finish, as through wgpu-py."""
    device = gpu.device
    texture = device.create_texture(size=(8, 8, 1), format="rgba16float",
                                    usage=wgpu.TextureUsage.RENDER_ATTACHMENT)
    target = RenderTarget(texture.create_view(), (0.0, 0.0, 0.0, 1.0),
                          color_format="rgba16float")
    descriptor = target.native_descriptor(True, False, "test:pass")
    assert descriptor is not None
    bundle = device.create_render_bundle_encoder(color_formats=["rgba8unorm"]).finish()
    encoder = device.create_command_encoder()
    render = native_calls.NativeRenderPass(encoder, descriptor)
    render.execute_bundles([bundle])
    render.end()
    with pytest.raises(wgpu.GPUValidationError, match="(?i)bundle|format|compatib"):
        encoder.finish()
    texture.destroy()


def test_a_native_render_pass_clears_loads_and_keeps_depth_as_wgpu_py_does(gpu):
    """The descriptor's attachments read back as wgpu-py's: a cleared pass leaves the clear
    colour and depth 1.0; a loading pass with read-only depth leaves both as they were; a depth
    format with stencil is not described (wgpu-py begins that pass)."""
    device = gpu.device
    usage = wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC
    color = device.create_texture(size=(4, 4, 1), format="rgba8unorm", usage=usage)
    depth = device.create_texture(size=(4, 4, 1), format="depth32float", usage=usage)
    target = RenderTarget(color.create_view(), (0.2, 0.4, 0.6, 1.0), depth.create_view(),
                          color_format="rgba8unorm", depth_format="depth32float")

    def run(clear: bool, read_only: bool) -> tuple[np.ndarray, np.ndarray]:
        descriptor = target.native_descriptor(clear, read_only, "test:pass")
        assert descriptor is not None
        encoder = device.create_command_encoder()
        native_calls.NativeRenderPass(encoder, descriptor).end()
        device.queue.submit([encoder.finish()])
        pixels = device.queue.read_texture({"texture": color}, {"bytes_per_row": 256},
                                           (4, 4, 1))
        depths = device.queue.read_texture({"texture": depth, "aspect": "depth-only"},
                                           {"bytes_per_row": 256}, (4, 4, 1))
        return (np.frombuffer(pixels, np.uint8).reshape(4, 256)[:, :16],
                np.frombuffer(depths, np.float32).reshape(4, 64)[:, :4])

    pixels, depths = run(clear=True, read_only=False)
    assert (pixels.reshape(4, 4, 4) == [51, 102, 153, 255]).all()
    assert (depths == 1.0).all()
    # a pass that writes something else first, through wgpu-py, then a loading read-only pass
    encoder = device.create_command_encoder()
    encoder.begin_render_pass(
        color_attachments=[{"view": target.color_view, "load_op": "clear", "store_op": "store",
                            "clear_value": (1.0, 0.0, 0.0, 1.0)}],
        depth_stencil_attachment={"view": target.depth_view, "depth_load_op": "clear",
                                  "depth_store_op": "store", "depth_clear_value": 0.25}).end()
    device.queue.submit([encoder.finish()])
    pixels, depths = run(clear=False, read_only=True)
    assert (pixels.reshape(4, 4, 4) == [255, 0, 0, 255]).all()
    assert (depths == 0.25).all()
    stencil = device.create_texture(size=(4, 4, 1), format="depth24plus-stencil8",
                                    usage=wgpu.TextureUsage.RENDER_ATTACHMENT)
    with_stencil = RenderTarget(color.create_view(), None, stencil.create_view(),
                                color_format="rgba8unorm", depth_format="depth24plus-stencil8")
    assert with_stencil.native_descriptor(False, False, "test:pass") is None
    for texture in (color, depth, stencil):
        texture.destroy()


def test_a_compiled_run_replays_into_a_recorder_through_its_methods():
    """Anything that is not a wgpu-native pass (a test's recorder) gets the methods; counts
    computed with numpy arrive as Python ints, and a fixed count of zero records nothing."""
    calls: list[tuple] = []

    class Recorder:
        def set_pipeline(self, p):
            calls.append(("set_pipeline", p))

        def set_bind_group(self, index, group):
            calls.append(("set_bind_group", index, group))

        def dispatch_workgroups(self, x, y, z):
            calls.append(("dispatch", x, y, z))

    counted: Any = (np.int64(3), np.int64(1), np.int64(1))
    run = frame_plan.compute_calls([Dispatch("p", ("g",), groups=counted),
                                    Dispatch("p", ("g",), groups=(2, 5, 1)),
                                    Dispatch("p", ("g",), groups=(0, 1, 1))])
    run(Recorder())
    assert calls == [("set_pipeline", "p"), ("set_bind_group", 0, "g"), ("dispatch", 3, 1, 1),
                     ("dispatch", 2, 5, 1)]
    assert all(type(a) is int for c in calls if c[0] == "dispatch" for a in c[1:])


def inherited(*names: str) -> dict[str, str]:
    """The named variables of this process's environment that are set (an install that puts
    emberfx on PYTHONPATH, as on a machine prepared from wheels, needs it in the child too)."""
    return {name: os.environ[name] for name in names if name in os.environ}


def test_the_switch_turns_native_calls_off():
    code = "from emberfx.core import native_calls; print(native_calls.enabled)"
    for value, expected in (("1", "False"), ("0", str(native_calls.AVAILABLE))):
        found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               env={"EMBERFX_WGPU_WRAPPERS": value, "PATH": "",
                                    **inherited("PYTHONPATH")}, check=True)
        assert found.stdout.strip() == expected
