"""What a frame repeats on the CPU: once the sampler has run a few frames, a frame makes no GPU
object (bind group, pipeline, render bundle, buffer, texture, view) and rewrites no look uniform
whose fields did not change; an edit of those fields still reaches the GPU on the next frame.
(Speed itself is measured by ``emberfx bench frame``, never asserted here.)"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest
import wgpu

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene

SIZE = (96, 54)
WARM_FRAMES = 8    # every ping-pong parity of the cloth and swarm draws has been recorded
CREATORS = ("create_bind_group", "create_render_bundle_encoder", "create_compute_pipeline",
            "create_render_pipeline", "create_buffer", "create_buffer_with_data",
            "create_texture", "create_sampler")


def frame(engine: Engine, output) -> None:
    engine.step(1)
    engine.draw_to(output)


@pytest.fixture
def sampler(gpu, scenes_dir):
    with Engine(load_scene(scenes_dir / "sampler.toml"), size=SIZE, scripts=False) as engine:
        output = engine.device.create_texture(
            size=(*SIZE, 1), format="rgba8unorm-srgb",
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
        for _ in range(WARM_FRAMES):
            frame(engine, output)
        yield engine, output
        output.destroy()


def test_later_frames_create_no_gpu_objects(sampler, monkeypatch):
    engine, output = sampler
    made: Counter = Counter()

    def counting(name, original):
        def call(*args, **kwargs):
            made[name] += 1
            return original(*args, **kwargs)
        return call

    for name in CREATORS:
        monkeypatch.setattr(engine.device, name, counting(name, getattr(engine.device, name)))
    texture_class = type(output)
    monkeypatch.setattr(texture_class, "create_view",
                        counting("create_view", texture_class.create_view))
    for _ in range(4):
        frame(engine, output)
    assert dict(made) == {}
    # the counting works: a frame into a new texture makes its view
    other = engine.device.create_texture(size=(*SIZE, 1), format="rgba8unorm-srgb",
                                         usage=wgpu.TextureUsage.RENDER_ATTACHMENT)
    engine.draw_to(other)
    other.destroy()
    assert made["create_view"] == 1 and made["create_texture"] == 1


def edit_looks(engine: Engine) -> None:
    engine.entity("flag").cloth.color = "#20ff40"
    engine.entity("swarm").particle_life.size = 0.05


def test_unchanged_looks_are_not_rewritten_and_an_edit_is(sampler, scenes_dir, monkeypatch):
    """The oracle of the edit: an engine edited before its first frame, after as many frames,
    gives the same bytes (both fields change only how things are drawn)."""
    engine, output = sampler
    written: Counter = Counter()
    queue = engine.device.queue
    original = queue.write_buffer

    def write_buffer(buffer, offset, data, *args):
        written[buffer.label] += 1
        return original(buffer, offset, data, *args)

    monkeypatch.setattr(queue, "write_buffer", write_buffer)
    for _ in range(3):
        frame(engine, output)
    assert written["flag/forces"] == 3    # the counting works (the wind gusts every step)
    assert written["flag/params"] == 0    # the cloth's records did not change
    assert written["flag/look"] == 0 and written["swarm/look"] == 0
    before = engine.render()
    written.clear()
    edit_looks(engine)
    frame(engine, output)
    assert written["flag/look"] == 1 and written["swarm/look"] == 1
    after = engine.render()
    monkeypatch.undo()
    with Engine(load_scene(scenes_dir / "sampler.toml"), size=SIZE, scripts=False) as fresh:
        edit_looks(fresh)
        for _ in range(WARM_FRAMES + 4):
            frame(fresh, output)
        np.testing.assert_array_equal(after, fresh.render())
    assert not np.array_equal(before, after)


def compute_runs(passes) -> int:
    """The oracle: maximal runs of consecutive compute passes in encoding order."""
    kinds = [p.kind for p in passes]
    return sum(1 for i, kind in enumerate(kinds)
               if kind == "compute" and (i == 0 or kinds[i - 1] != "compute"))


def test_each_run_of_compute_passes_is_one_gpu_compute_pass(sampler, monkeypatch):
    """Consecutive dispatches share one GPUComputePass, and the drawing phases' compute work
    runs before draws it does not touch, so the sampler's draws need five render passes: the
    light's shadow map, the multisampled geometry, the sprites (after the depth resolve, in the
    same pass), its soft particles (read-only depth) and the output."""
    engine, output = sampler
    begun: Counter = Counter()
    encoder_class = type(engine.device.create_command_encoder())

    def counting(name, original):
        def call(self, *args, **kwargs):
            begun[name] += 1
            return original(self, *args, **kwargs)
        return call

    for name in ("begin_compute_pass", "begin_render_pass"):
        monkeypatch.setattr(encoder_class, name, counting(name, getattr(encoder_class, name)))
    # a render pass of bundles is begun through the C function (core/native_calls.py)
    from emberfx.core import native_calls
    monkeypatch.setattr(native_calls.NativeRenderPass, "__init__",
                        counting("begin_render_pass", native_calls.NativeRenderPass.__init__))
    from emberfx.core.frame_graph import DRAWING_PHASES, SIMULATION_PHASES

    engine.step(1)
    simulation = engine.frame_passes(SIMULATION_PHASES)
    assert begun["begin_compute_pass"] == compute_runs(simulation) < len(
        [p for p in simulation if p.kind == "compute"]) / 10
    assert begun["begin_render_pass"] == 0
    begun.clear()
    engine.draw_to(output)
    drawing = engine.frame_passes(DRAWING_PHASES)
    assert begun["begin_compute_pass"] == compute_runs(drawing)
    assert begun["begin_render_pass"] == 5


def test_an_unchanged_frame_compiles_sorts_and_checks_nothing(sampler, monkeypatch):
    """The frame graph is sorted, checked and compiled once per distinct pass list: not for an
    unchanged frame, nor when the systems are asked for their passes again and give the same
    ones (the graph is rebuilt then, as after a live edit that changes passes)."""
    import emberfx.core.frame_order
    import emberfx.core.frame_plan

    engine, output = sampler
    work: Counter = Counter()

    def counting(name, original):
        def call(*args):
            work[name] += 1
            return original(*args)
        return call

    for module, name in ((emberfx.core.frame_order, "sorted_passes"),
                         (emberfx.core.frame_order, "check_reads"),
                         (emberfx.core.frame_plan, "compute_calls")):
        monkeypatch.setattr(module, name, counting(name, getattr(module, name)))
    frame(engine, output)
    assert dict(work) == {}
    engine.passes_changed()
    frame(engine, output)
    assert work["sorted_passes"] == work["check_reads"] == 0
    # the counting works: a pass list of another shape is sorted and checked
    engine.entity("flag").cloth.wireframe = True
    frame(engine, output)
    assert work["sorted_passes"] == work["check_reads"] == 1 and work["compute_calls"] > 0


def test_a_frame_writes_each_buffer_once_at_most(sampler, monkeypatch):
    engine, output = sampler
    written: Counter = Counter()
    queue = engine.device.queue
    original = queue.write_buffer

    def write_buffer(buffer, offset, data, *args):
        written[id(buffer), buffer.label] += 1
        return original(buffer, offset, data, *args)

    monkeypatch.setattr(queue, "write_buffer", write_buffer)
    frame(engine, output)
    assert written and max(written.values()) == 1, written.most_common(3)


def test_a_live_edit_checks_the_numbers_and_files_of_the_edited_fields_only(sampler,
                                                                             monkeypatch):
    """Scripts edit a field or two every step: the checks of a field alone (32-bit numbers,
    file paths) run for the fields whose values changed, while the types and the class's own
    checks still see the whole component (a refused edit reads as the loader says it)."""
    import emberfx.model.component_values as component_values
    import emberfx.model.loader as loader
    import emberfx.model.scene as scene_module
    from emberfx.model.loader import SceneLoader

    engine, output = sampler
    numbers_checked, paths_checked = [], []
    bad_numbers, path_value = loader.bad_numbers, SceneLoader.path_value

    def numbers_spy(cls, table, prefix):
        numbers_checked.append((prefix, sorted(table)))
        return bad_numbers(cls, table, prefix)

    def path_spy(scene_loader, value, field, entity):
        paths_checked.append(field)
        return path_value(scene_loader, value, field, entity)

    plain_edit = component_values.plain_edit
    plain_checked = []

    def plain_spy(cls, value, since, differing):   # plain numbers: checked without converting
        valid = plain_edit(cls, value, since, differing)
        if valid is not None:
            plain_checked.append((cls.__name__, [n for n in differing
                                                 if getattr(valid, n) is not getattr(since, n)]))
        return valid

    monkeypatch.setattr(loader, "bad_numbers", numbers_spy)
    monkeypatch.setattr(component_values, "bad_numbers", numbers_spy)   # edits checked alone
    monkeypatch.setattr(scene_module, "plain_edit", plain_spy)
    monkeypatch.setattr(SceneLoader, "path_value", path_spy)
    fountain = engine.entity("fountain").emitter
    fountain.position = (0.5, -1.9, 0.0)
    fountain.direction = (0.0, 1.0, 0.0)      # the value it had: nothing to check
    fountain.gravity = [0.0, -9.81, 0.0]      # the value it had, as a list: the same tuple
    engine.entity("well").attractor.strength = 2.0
    frame(engine, output)
    assert plain_checked == [("Emitter", ["position"]), ("Attractor", ["strength"])]
    assert numbers_checked == []
    assert paths_checked == []
    # a value that is not a plain number takes the checks of the field alone
    fountain.position = (np.float32(0.25), -1.9, 0.0)
    fountain.gravity = [0.0, -9.8, 0.0]
    frame(engine, output)
    assert numbers_checked == [("emitter", ["gravity", "position"])]
    assert fountain.position == (0.25, -1.9, 0.0) and fountain.gravity == (0.0, -9.8, 0.0)
    numbers_checked.clear()
    assert fountain.position == (0.25, -1.9, 0.0)
    assert type(fountain.gravity) is tuple   # the loader's types, as before
    # the counting works, and the checks still refuse: a file and a number, each alone
    fountain.init = "modifiers/none.wgsl"
    with pytest.raises(SceneError) as refused:
        frame(engine, output)
    assert paths_checked == ["emitter.init"]
    assert str(refused.value).startswith("live edit: entity 'fountain': emitter.init: "
                                         "expected an existing file, found 'modifiers/none.wgsl'")
    assert fountain.init is None and fountain.position == (0.25, -1.9, 0.0)
    numbers_checked.clear()
    fountain.size = 1e39
    with pytest.raises(SceneError, match=r"^live edit: entity 'fountain': emitter.size: "
                                         r"expected a number within the 32-bit float range"):
        frame(engine, output)
    assert numbers_checked == [("emitter", ["size"])]
    assert fountain.size == 0.035


def test_each_script_file_is_looked_at_once_a_step(gpu, tmp_path, monkeypatch):
    """A script file is looked at (a stat) for changes once per step, not once per hook
    call: here each step calls four hooks of two scripts."""
    from emberfx.engine.scripting import Script

    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "pinger.py").write_text(
        "heard = []\n"
        "def on_update(ctx, dt):\n"
        "    ctx.emit('ping', None)\n"
        "def on_event(ctx, name, data):\n"
        "    heard.append(name)\n")
    (tmp_path / "scripts" / "listener.py").write_text(
        "def on_event(ctx, name, data):\n"
        "    ctx.self.emitter.size = 0.01 + 0.01 * ctx.frame\n")
    path = tmp_path / "scene.toml"
    path.write_text('[scene]\nscript = "scripts/pinger.py"\n[camera]\nkind = "orthographic"\n'
                    '[[entity]]\nname = "jet"\nscript = "scripts/listener.py"\n'
                    '[entity.emitter]\ncapacity = 64\nrate = 60.0\n')
    looks: Counter = Counter()
    changed = Script.changed

    def counting(script):
        looks[script.path.name] += 1
        return changed(script)

    with Engine(load_scene(path), size=(16, 16)) as engine:
        engine.step(1)
        monkeypatch.setattr(Script, "changed", counting)
        engine.step(3)
        assert dict(looks) == {"pinger.py": 3, "listener.py": 3}
        # the oracle that the hooks ran: the listener heard step 3's ping
        assert engine.entity("jet").emitter.size == pytest.approx(0.01 + 0.01 * 3, abs=1e-12)


def test_lone_emitters_write_their_step_records_in_one_page(sampler, monkeypatch):
    """The two lone emitters' params and counters (collisions and sending events keep them
    alone; the two prewarmed emitters and the two that the rockets' events spawn into share a
    batch) are views into one page per kind, written with one call each a step, and the event
    source's totals (rockets: on_death, on_age) are kept by the GPU across those writes."""
    engine, output = sampler
    system = engine.system_of("fountain", "emitter")
    lone = [p for p in system.pools.values() if p.batch is None]
    assert sorted(p.entity.name for p in lone) == ["fountain", "rockets"]
    assert [sorted(p.entity.name for p in b.members) for b in system.batches] == [
        ["gold", "mist", "sparkle", "stars"]]
    for kind in ("params", "counters"):
        assert len({id(p.buffers[kind].buffer) for p in lone}) == 1
    written: Counter = Counter()
    queue = engine.device.queue
    original = queue.write_buffer

    def write_buffer(buffer, offset, data, *args):
        written[buffer.label] += 1
        return original(buffer, offset, data, *args)

    monkeypatch.setattr(queue, "write_buffer", write_buffer)
    frame(engine, output)
    pages = {label: n for label, n in written.items() if label.startswith("~lone")}
    assert sorted(n for n in pages.values()) == [1, 1] and len(pages) == 2, written
    monkeypatch.undo()
    before = system.counters(engine.entity_ref("rockets"))["event_totals"]
    for _ in range(90):   # rockets fire every 0.8 s and live 1.05-1.25 s: some died
        engine.step(1)
    after = system.counters(engine.entity_ref("rockets"))["event_totals"]
    assert after[0] > before[0] and after[2] > before[2], (before, after)


def test_lone_records_are_reused_and_an_empty_page_is_released(gpu):
    from emberfx.model.scene import Scene, SceneSettings
    from emberfx.systems.emitter.component import Emitter
    from emberfx.systems.emitter.records import PAGE_RECORDS

    with Engine(Scene(SceneSettings(name="pages")), size=SIZE, scripts=False) as engine:
        names = [f"e{k}" for k in range(PAGE_RECORDS + 1)]
        for name in names:   # atomic allocation keeps them out of batches: each runs alone
            engine.spawn(name, {"emitter": Emitter(capacity=300, rate=600.0,
                                                   allocation="atomic")})
        engine.step(2)
        system = engine.system_of(names[0], "emitter")
        assert len(system.records.pages) == 2
        second = system.records.places[id(system.pools[names[-1]])][0].name
        assert any(n.startswith(f"{second}/") for n in engine.resources.names())
        engine.delete(names[-1])
        engine.step(1)
        assert len(system.records.pages) == 1
        assert not any(n.startswith(f"{second}/") for n in engine.resources.names())
        engine.delete(names[0])
        engine.spawn("late", {"emitter": Emitter(capacity=300, rate=600.0, allocation="atomic")})
        engine.step(3)
        assert len(system.records.pages) == 1   # the freed record is reused
        assert system.records.places[id(system.pools["late"])][1] == 0
        for name in [*names[1:-1], "late"]:
            counters = system.counters(engine.entity_ref(name))
            assert counters["step_budget"] == 10 and counters["born"] == 10, (name, counters)


# Values a live edit may give a field checked alone: valid ones, and ones that the number check,
# the type or the class's own checks refuse (each refusal must read as the whole check says).
EDIT_VALUES: tuple[object, ...] = (
    (0.25, -1.0, 3.0), [0.0, 2.0, 0.0], (0, 1, 0), (0.0, 0.0, 0.0), (1.0, 2.0),
    (float("nan"), 0.0, 0.0), (1e39, 0.0, 0.0), (3.0, -2.0), (1.0, "a", 0.0),
    0.5, 0.0, -0.5, 2.0, 7, 65, 1e39, float("inf"), True, None, "up", [],
    # plain numbers (checked without converting) at their limits, and numpy ones (not plain)
    -0.0, 1.0, 180.0, 180.5, 1e-39, 2**40, (0.0, 1e-39, 1.0), [1, 2.5, -3], (2, 3),
    np.float64(0.5), (np.float32(1.0), 0.0, 0.0))


# per component checked alone: a field outside CHECKED_ALONE and a valid value for it, edited
# along with one checked alone so that the whole check runs (None: every field is checked alone)
WHOLE_CHECK_EDITS: dict[str, tuple[str, object] | None] = {
    "emitter": ("size", 0.125), "attractor": None, "particle_life": ("blend", "alpha")}


@pytest.mark.parametrize("key", sorted(WHOLE_CHECK_EDITS))
def test_edits_of_fields_checked_alone_read_as_the_whole_check(scenes_dir, key):
    """The oracle is the whole component's check (no ``since``): for every such component of
    the bundled scenes, an edit of one or two fields of ``CHECKED_ALONE`` (or of one and another
    field) gives the same values and types, or the same refusal, as the live edit's check."""
    import copy
    import dataclasses

    from emberfx.model.registry import component_types
    from emberfx.model.scene import validated_copy

    cls: Any = component_types()[key].cls
    alone = sorted(cls.CHECKED_ALONE)
    declared = {f.name for f in dataclasses.fields(cls)}
    assert set(alone) <= declared
    assert not set(alone) & {*getattr(cls, "PATH_FIELDS", ()),
                             *(f.split(".")[0] for f in getattr(cls, "REFERENCES", {}))}

    def outcome(edited, since):
        try:
            valid = validated_copy(edited, key, entity="e", path=None, since=since)
        except SceneError as exc:
            return str(exc)
        return [(name, type(getattr(valid, name)), getattr(valid, name))
                for name in declared]

    bases = [c for path in sorted(scenes_dir.glob("*.toml"))
             for spec in load_scene(path).entities for c in spec.components.values()
             if isinstance(c, cls) and not any(getattr(c, f, None) for f in
                                               ("init", "update", "mesh"))
             and getattr(getattr(c, "shape", None), "path", None) is None]   # files: no scene
                                                                             # path to resolve
    assert len(bases) >= {"emitter": 10, "attractor": 3, "particle_life": 3}[key]
    # base k pairs each field with the one (k + 1) places on: enough bases (the scenes' own,
    # repeated) that every field meets every other
    bases = [bases[k % len(bases)] for k in range(max(len(bases), len(alone) - 1))]
    other = WHOLE_CHECK_EDITS[key]
    compared = refused = 0
    for index, base in enumerate(bases):
        for k, name in enumerate(alone):
            partner = alone[(k + index + 1) % len(alone)]
            for j, value in enumerate(EDIT_VALUES):
                edited = copy.deepcopy(base)
                setattr(edited, name, value)
                if j % 3 == 0 or (j % 3 == 1 and other is None):   # two fields checked alone
                    setattr(edited, partner, EDIT_VALUES[(j + 7) % len(EDIT_VALUES)])
                elif j % 3 == 1 and other is not None:   # and a field that gets the whole check
                    setattr(edited, *other)
                fast, whole = outcome(edited, base), outcome(edited, None)
                assert fast == whole, (name, value)
                compared += 1
                refused += isinstance(whole, str)
    assert refused > compared / 2 and compared - refused > compared / 20, (refused, compared)


def test_a_live_edit_of_fields_checked_alone_skips_the_whole_check(sampler, monkeypatch):
    """The sampler's scripts move the fountain every step: its edit is checked field by field,
    without the whole component's conversion and class checks; an edit of another field still
    gets the whole check."""
    from emberfx.model.loader import SceneLoader

    engine, output = sampler
    whole: Counter = Counter()
    component = SceneLoader.component

    def counting(loader, key, *args):
        whole[key] += 1
        return component(loader, key, *args)

    monkeypatch.setattr(SceneLoader, "component", counting)
    fountain = engine.entity("fountain").emitter
    fountain.position = (0.5, -1.9, 0.0)
    fountain.direction = [0.1, 1.0, 0.0]
    frame(engine, output)
    assert whole["emitter"] == 0
    assert fountain.position == (0.5, -1.9, 0.0) and type(fountain.direction) is tuple
    fountain.direction = (0.0, 0.0, 0.0)
    with pytest.raises(SceneError, match=r"^live edit: entity 'fountain': emitter.direction: "
                                         r"expected a non-zero vector"):
        frame(engine, output)
    assert whole["emitter"] == 1 and fountain.direction == (0.1, 1.0, 0.0)
    fountain.size = 0.04
    fountain.position = (0.4, -1.9, 0.0)
    frame(engine, output)
    assert whole["emitter"] == 2 and fountain.size == 0.04
    # the other two components the sampler's scripts edit every step
    well, swarm = engine.entity("well").attractor, engine.entity("swarm").particle_life
    well.position = [-4.5, 4.0, -2.0]
    swarm.force = 1.25
    frame(engine, output)
    assert whole["attractor"] == whole["particle_life"] == 0
    assert well.position == (-4.5, 4.0, -2.0) and type(well.position) is tuple
    swarm.force = float("nan")
    with pytest.raises(SceneError, match=r"^live edit: entity 'swarm': particle_life.force: "):
        frame(engine, output)
    assert whole["particle_life"] == 1 and swarm.force == 1.25
    swarm.r_max = 0.3   # a field no edit checks alone
    swarm.force = 1.5
    frame(engine, output)
    assert whole["particle_life"] == 2 and swarm.r_max == 0.3


def test_short_hook_calls_do_not_each_wake_the_watchdog():
    """Scripts make several short hook calls a frame: only the first wakes the watchdog thread
    (a wake-up is a thread switch), and a hook that runs past its limit is still stopped."""
    import queue
    import time

    from emberfx.engine.script_watchdog import ScriptTimeout, Watchdog

    wakes: Counter = Counter()

    class CountingQueue(queue.SimpleQueue):
        def put(self, item, block=True, timeout=None):
            wakes["put"] += 1
            super().put(item, block, timeout)

    dog = Watchdog()
    dog._wake = CountingQueue()
    for _ in range(100):
        call = dog.call(0.4)
        dog.begin(call)
        dog.end(call)
        time.sleep(0.001)   # the watchdog thread gets its turn between the hooks
    # one wake-up, and one more per quiet 0.4 s that a loaded machine may leave between two
    # hooks; a wake-up per hook would make 100
    assert 1 <= wakes["put"] <= 10, wakes
    call = dog.call(0.4)
    assert call is not None
    started = time.monotonic()
    with pytest.raises(ScriptTimeout):
        dog.begin(call)
        try:
            while time.monotonic() - started < 5.0:
                pass
        finally:
            dog.end(call)
    assert call.fired and 0.4 <= time.monotonic() - started < 2.0
    wakes.clear()
    call = dog.call(0.05)   # a shorter limit than the watchdog's next look: it is woken
    dog.begin(call)
    dog.end(call)
    assert wakes["put"] == 1



def test_a_step_packs_only_what_changed_for_lone_emitters(sampler, monkeypatch):
    """A step packs Force records only for the emitters a force acts on, once per set of
    forces (in the sampler: the stars, which the well pulls and which share a batch, once per
    step; no lone emitter) and the sprite look only after
    an edit of a field it is packed from; a script moving the fountain packs its params, not
    its look. The oracle of the edit: the look's bytes as written equal a fresh packing of the
    edited component."""
    import emberfx.systems.emitter.looks as emitter_looks
    import emberfx.systems.emitter.params as emitter_params
    from emberfx.systems.emitter.looks import pack_sprite_look

    engine, output = sampler
    packed: Counter = Counter()
    for module, name in ((emitter_params, "pack_forces"), (emitter_looks, "pack_sprite_look")):
        original = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _f=original, _n=name, **k:
                            packed.update([_n]) or _f(*a, **k))
    written: dict[str, list[bytes]] = {}
    queue = engine.device.queue
    write = queue.write_buffer

    def write_buffer(buffer, offset, data, *args):
        written.setdefault(buffer.label, []).append(bytes(data))
        return write(buffer, offset, data, *args)

    monkeypatch.setattr(queue, "write_buffer", write_buffer)
    fountain = engine.entity("fountain").emitter
    for k in range(3):
        fountain.position = (0.1 * k, -1.9, 0.0)
        frame(engine, output)
    assert packed == {"pack_forces": 3}, packed
    assert "fountain/sprite_look" not in written
    fountain.stretch = 0.05
    frame(engine, output)
    assert packed["pack_sprite_look"] == 1
    look = pack_sprite_look(fountain)   # (the first bytes of its RECORD-byte row)
    assert [data[:len(look)] for data in written["fountain/sprite_look"]] == [look]


def test_a_target_inbox_is_packed_again_only_when_its_links_change(sampler, monkeypatch):
    """The event targets' inboxes are written every step (the GPU's tallies of the last step
    are in them) from a record packed once; an edit of the source's event count reaches the
    next write. Gold is batched: its inbox is its row of the batch's inbox arena, written
    with the other members' in one call, and its records_base is where its view into the
    batch's records arena starts."""
    from emberfx.systems.emitter.events import INBOX, RECORD

    engine, output = sampler
    system = engine.system_of("gold", "emitter")
    gold = system.pools["gold"]
    batch = gold.batch
    assert batch is not None
    record = system.events.inboxes["gold"][1]
    arena = batch.sim.buffers["event_links"]
    inboxes: list[np.ndarray] = []
    queue = engine.device.queue
    write = queue.write_buffer

    def write_buffer(buffer, offset, data, *args):
        if buffer is arena.buffer:
            assert offset == arena.offset
            assert len(bytes(data)) == len(batch.members) * INBOX.itemsize
            inboxes.append(np.frombuffer(bytes(data), INBOX)[gold.member])
        return write(buffer, offset, data, *args)

    monkeypatch.setattr(queue, "write_buffer", write_buffer)
    frame(engine, output)
    assert system.events.inboxes["gold"][1] is record and len(inboxes) == 1
    assert inboxes[0]["link_count"] == 1 and inboxes[0]["links"][0]["count"] == 700
    records, arena_records = gold.buffers["event_records"], batch.sim.buffers["event_records"]
    assert records.buffer is arena_records.buffer
    assert inboxes[0]["records_base"] * RECORD.itemsize == records.offset - arena_records.offset
    assert gold.buffers["event_links"].offset == arena.offset + gold.member * INBOX.itemsize
    engine.entity("rockets").emitter.on_death.count = 650
    frame(engine, output)
    assert len(inboxes) == 2 and inboxes[1]["links"][0]["count"] == 650


def test_a_live_edit_checked_alone_compares_the_fields_it_touched_only(sampler, monkeypatch):
    """An edit checked field by field compares (and copies back) only the fields that do not
    hold the last valid values' very objects; the oracle is the comparison of every field."""
    import dataclasses

    import emberfx.engine.live_edits as live_edits
    from emberfx.model.components import changed_between

    engine, output = sampler
    seen = []

    def spy(cls, before, after, among=None):
        found = changed_between(cls, before, after, among)
        seen.append((cls.__name__, among, found, changed_between(cls, before, after)))
        return found

    monkeypatch.setattr(live_edits, "changed_between", spy)
    fountain = engine.entity("fountain").emitter
    fountain.position = (0.3, -1.9, 0.0)
    fountain.direction = [0.1, 1.0, 0.0]
    frame(engine, output)
    (name, among, found, whole), = seen
    fields = [f.name for f in dataclasses.fields(type(fountain))]
    assert name == "Emitter" and found == whole and found is not None
    assert {"position", "direction"} <= set(among) and len(among) < len(fields) / 2
    assert not {"rate", "capacity", "gravity", "size"} & set(among)
    assert type(fountain.direction) is tuple
    seen.clear()
    fountain.capacity = 50000   # the whole check: every field compared
    frame(engine, output)
    assert seen[0][1] is None and seen[0][2] == seen[0][3]
    # The whole check made new values of every field; the tracking names the fields a script
    # sets, so the next edits compare the edited field only, though the mutable values (lists,
    # nested components) of the live component and its valid copy are different objects
    for k in range(2):
        seen.clear()
        fountain.position = (0.4 + k, -1.9, 0.0)
        frame(engine, output)
    (name, among, found, whole), = seen
    assert found == whole and among == ["position"]
    assert any(isinstance(getattr(fountain, f), list) for f in fields)
    # an edit inside a nested value names no field: the whole check, every field compared
    seen.clear()
    fountain.size_curve[0] = fountain.size_curve[0] * 0.5
    fountain.position = (0.2, -1.9, 0.0)
    frame(engine, output)
    (name, among, found, whole), = seen
    assert among is None and found == whole is not None


def test_dispatches_of_one_pipeline_are_encoded_together_where_hazards_allow():
    """Independent dispatches of a compute run are grouped by pipeline (one set_pipeline for
    each group); a dispatch that reads, or writes, what an earlier one of another pipeline
    writes or reads keeps its place after it."""
    from emberfx.core.frame_graph import Dispatch, FrameGraph, Pass, Phase

    def encoded(passes):
        log = []

        class Recorder:
            def begin_compute_pass(self, **kwargs):
                return self

            def __getattr__(self, name):
                return lambda *args, **kwargs: log.append((name, args[0] if args else None))

        FrameGraph(passes, uploaded={r for p in passes for r in p.reads}).encode(Recorder(), {})
        return [arg for name, arg in log if name == "set_pipeline"], \
            [name for name, _ in log if name.startswith("dispatch")]

    def dispatch(name, pipeline, reads=(), writes=()):
        return Pass(name, Phase.SIMULATE, Dispatch(pipeline, groups=(1, 1, 1)),
                    reads=tuple(reads), writes=tuple(writes))

    # each emitter: update then ranks, sharing the two pipelines with the others
    independent = [dispatch(f"{e}:{step}", step, reads=[f"{e}/c"], writes=[f"{e}/c"])
                   for e in "abc" for step in ("update", "ranks")]
    pipelines, dispatches = encoded(independent)
    assert pipelines == ["update", "ranks"] and len(dispatches) == 6
    # c (pipeline p) may join a only when it does not touch what b (pipeline q) writes before
    # it: read after write and write after write keep it after b (the graph orders a writer
    # before the readers of what it writes)
    for first, second in ((dict(writes=["y"]), dict(reads=["y"])),
                          (dict(writes=["y"]), dict(writes=["y"])),
                          (dict(reads=["y"], writes=["y"]), dict(reads=["y"], writes=["y"]))):
        passes = [dispatch("a:1", "p", writes=["x"]), dispatch("b:1", "q", **first),
                  dispatch("c:1", "p", **second)]
        assert encoded(passes)[0] == ["p", "q", "p"], (first, second)
        passes[2] = dispatch("c:1", "p", **{k: ["z"] for k in second})
        assert encoded(passes)[0] == ["p", "q"], (first, second)


def test_a_step_sets_each_shared_pipeline_fewer_times(gpu, monkeypatch):
    """Three event sources run alone, one after another, with the same passes (update, scan,
    tally, write, ranks, spawn); their children share a batch."""
    from emberfx.core import native_calls
    from emberfx.core.frame_graph import SIMULATION_PHASES, Dispatch
    from emberfx.model.scene import loads_scene

    text = "".join(f"""
[[entity]]
name = "child{k}"
[entity.emitter]
capacity = 500
rate = 0.0
[[entity]]
name = "source{k}"
[entity.emitter]
capacity = 300
rate = 900.0
lifetime = [0.05, 0.1]
on_death = {{ emitter = "child{k}", count = 1 }}
""" for k in range(3))
    engine = Engine(loads_scene('[scene]\nname = "sources"\n' + text, path="<sources>"),
                    size=SIZE, scripts=False)
    engine.step(2)
    calls: Counter = Counter()
    # counted through wgpu-py's method: the C calls of native_calls.py record the same commands
    monkeypatch.setattr(native_calls, "enabled", False)
    compute_class = type(engine.device.create_command_encoder().begin_compute_pass())
    original = compute_class.set_pipeline
    monkeypatch.setattr(compute_class, "set_pipeline",
                        lambda self, p: calls.update(["set_pipeline"]) or original(self, p))
    engine.step(1)
    ops = [p.op for p in engine.frame_passes(SIMULATION_PHASES) if isinstance(p.op, Dispatch)]
    in_order = sum(1 for i, op in enumerate(ops)
                   if i == 0 or op.pipeline is not ops[i - 1].pipeline)
    distinct = len({id(op.pipeline) for op in ops})
    # the emitters' passes of one kind that share a pipeline (ranks, spawns, the updates of
    # one variant) are recorded together: at least three set_pipeline calls fewer than in the
    # passes' order
    assert distinct <= calls["set_pipeline"] <= in_order - 3, (calls, in_order, distinct)
    system = engine.system_of("child0", "emitter")
    assert [sorted(p.entity.name for p in b.members) for b in system.batches] == [
        ["child0", "child1", "child2"]]
    engine.close()
