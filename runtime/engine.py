"""The Engine: one scene's esper world, its systems, its frame graph and its render targets.

    engine = Engine(load_scene("scenes/fountain.toml"), size=(640, 360))
    engine.step(120)                 # 120 fixed steps of scene.fixed_dt
    image = engine.render()          # (360, 640, 4) uint8
    engine.state("fountain")["alive"].sum()

Simulation and drawing are separate submissions: ``step`` encodes the CLEAR, SIMULATE, PREPARE and
READBACK phases once per fixed step; ``render``/``draw_to`` encode RENDER and POST for the current
state. The window and the CLI are thin faces over this class.

Every public method first checks the rules of engine_guard.py: the Engine is open (close() is
final), it is used from the thread that created it, and esper is switched to its own world.
Edits of live components (``engine.entity("jet").emitter.rate = 900``) go through live_edits.py.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import itertools
import threading
import time
from collections.abc import Callable

import esper
import numpy as np
import wgpu

from emberfx import live_edits, registry, wgsl
from emberfx.bundles import BundleCache
from emberfx.clock import FixedClock
from emberfx.colors import linear_color
from emberfx.engine_guard import (
    checked_components,
    checked_scene,
    entity_name,
    guard_public_methods,
    in_world,
    refusal,
    render_size,
    seconds,
    step_count,
)
from emberfx.errors import DeviceLimitError, EmberError
from emberfx.frame_graph import (
    DRAWING_PHASES,
    SIMULATION_PHASES,
    CopyBuffer,
    Draw,
    FrameGraph,
    Pass,
    Phase,
    RenderTarget,
)
from emberfx.gpu import get_context
from emberfx.layout import struct_dtype
from emberfx.live_edits import copy_fields
from emberfx.profiler import PassProfiler
from emberfx.readback import GatherLayout, ReadbackRing
from emberfx.system import EntityRef, SharedResources, StepInfo, System, WorldView, snapshot

FRAME = struct_dtype("common/frame.wgsl", "Frame")
OUTPUT_FORMAT = "rgba8unorm-srgb"   # what render() returns: sRGB-encoded RGBA bytes
_world_ids = itertools.count()
READBACK_MIN_BYTES = 256   # the smallest gather buffer: room for 16 emitters' counters


@dataclasses.dataclass(frozen=True)
class Name:
    """The esper component that carries an entity's scene name."""
    value: str


class EntityView:
    """``engine.entity("fountain")``: the entity's live components as attributes."""

    def __init__(self, name: str, components: dict[str, object]):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "_components", components)

    def __getattr__(self, key: str):
        try:
            return self._components[key]
        except KeyError:
            raise AttributeError(f"entity '{self.name}' has no component '{key}'; it has: "
                                 f"{', '.join(self._components) or 'none'}") from None

    def __setattr__(self, key, value):
        raise AttributeError("edit the component's fields, e.g. entity.emitter.rate = 500.0")

    def __dir__(self):
        return list(self._components)


@guard_public_methods(exempt=("close",))   # engine_guard: open, owner thread, own world
class Engine:
    def __init__(self, scene, size: tuple[int, int] | None = None, *, scripts=True,
                 script_timeout: float | None = None):
        """``scripts``: False (or EMBERFX_NO_SCRIPTS=1) runs none of the scene's scripts; a
        ``ScriptPolicy`` also sets the time limit and allows scripts outside the scene's folder.
        ``script_timeout``: seconds a hook may run (default 5; 0: no limit)."""
        from emberfx.scripting import check_script_locations, script_policy

        self._owner = threading.current_thread()
        self._owner_ident: int | None = threading.get_ident()   # None once closed
        scene = checked_scene(scene, "Engine(scene)")
        size = render_size(size) if size is not None else None
        self.script_policy = script_policy(scripts, script_timeout)
        check_script_locations(scene, self.script_policy)   # before any GPU work
        self.scene = scene          # as loaded; reload() diffs the next version against it
        # live: the window's mouse moves this one; its fit refers to the scene's size
        self.camera = scene.camera.with_reference(scene.settings.size)
        self.gpu = get_context()
        self.device = self.gpu.device
        self.adapter = self.gpu.adapter
        self.clock = FixedClock(scene.settings.fixed_dt)
        self.size = self._checked_size(size if size is not None else scene.settings.size)
        self._world = f"emberfx-{next(_world_ids)}"
        self._frame_uniform = self.device.create_buffer(
            label="frame", size=FRAME.itemsize,
            usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
        self._shared = SharedResources(frame_uniform=self._frame_uniform,
                                       fixed_dt=scene.settings.fixed_dt, seed=scene.settings.seed,
                                       resolve=scene.resolve, scene_path=scene.path)
        self._background = linear_color(scene.settings.background)
        self._graphs: dict[str, FrameGraph] = {}
        self._stale_graphs: dict[str, FrameGraph] = {}   # replaced ones, to reuse their order
        self._bundles = BundleCache(self.device)   # the draws, recorded once and replayed
        self._frame_record = np.zeros((), FRAME)
        self._frame_key: tuple | None = None
        self.readback_every = 1   # steps between counter readbacks (the window reads fewer)
        self._present: dict[str, tuple] = {}
        self._encode_seconds = 0.0
        self._profiler: PassProfiler | None = None   # only while engine.profiling is on
        self._make_targets()
        try:
            self._build_world()
        except Exception:
            self.close()   # release what was built and the esper world before reporting
            raise
        from emberfx.scripting import Scripts

        self.scripts = Scripts(self)

    # construction ------------------------------------------------------------------------------
    def _checked_size(self, size) -> tuple[int, int]:
        w, h = render_size(size)
        limit = self.gpu.limits["max-texture-dimension-2d"]
        if not (1 <= w <= limit and 1 <= h <= limit):
            raise DeviceLimitError(f"render size {w}x{h} is outside 1..{limit} per side on "
                                   f"this device ({self.gpu.label})")
        return (w, h)

    def _make_targets(self) -> None:
        self._bundles.clear()   # they hold bind groups of the old targets
        w, h = self.size
        usage = (wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.TEXTURE_BINDING
                 | wgpu.TextureUsage.COPY_DST | wgpu.TextureUsage.STORAGE_BINDING)
        self._scene_texture = self.device.create_texture(
            label="scene/color", size=(w, h, 1), format=self._shared.scene_format, usage=usage)
        self._shared.scene_texture = self._scene_texture
        self._depth_texture = self.device.create_texture(
            label="scene/depth", size=(w, h, 1), format=self._shared.depth_format,
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT)
        self._output_texture = self.device.create_texture(
            label="output", size=(w, h, 1), format=OUTPUT_FORMAT,
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
        self._scene_target = RenderTarget(self._scene_texture.create_view(), self._background,
                                          self._depth_texture.create_view(),
                                          self._shared.scene_format, self._shared.depth_format)
        self._present.clear()
        self._invalidate_graphs()

    def _build_world(self) -> None:
        self._entities: dict[str, EntityRef] = {}
        self._components: dict[str, dict[str, object]] = {}
        types = registry.component_types()
        self._systems: dict[str, System] = {}
        self._added: list[tuple[str, str]] = []   # (component key, entity) with GPU resources
        for index, spec in enumerate(self.scene.entities):
            components = {k: copy.deepcopy(c) for k, c in spec.components.items()}
            with in_world(self._world):
                eid = esper.create_entity(Name(spec.name), *components.values())
            self._entities[spec.name] = EntityRef(spec.name, index, eid)
            self._components[spec.name] = components
        self._shared.world = WorldView(self._entities, self._components)
        self._snapshots: dict[tuple[str, str], live_edits.Committed] = {}
        for name in self._components:
            self._attach(name, types)
        self._setup_readback()

    def _attach(self, name: str, types) -> None:
        """Give each of the entity's components to its system (GPU resources are made here)."""
        for key, component in self._components[name].items():
            self._snapshots[(name, key)] = live_edits.committed(component)
            system_cls = types[key].system
            if system_cls is None:
                continue
            if key not in self._systems:
                # one object per system class: a system may own several component keys
                shared = next((s for s in self._systems.values() if type(s) is system_cls), None)
                self._systems[key] = shared or system_cls(self.gpu, self._shared)
            self._systems[key].add(self._entities[name], component)
            self._added.append((key, name))

    def _system_objects(self) -> list:
        """Each system object once (several component keys may share one)."""
        return list({id(s): s for s in self._systems.values()}.values())

    def _setup_readback(self) -> None:
        """Lay out every system's readback regions in a new gather buffer and ring (when the
        world is built, and after a rebuild replaced an entity's buffers). Spawn and delete
        adjust the layout in place instead (_world_changed)."""
        layout = GatherLayout()
        for r in (r for s in self._system_objects() for r in s.readbacks()):
            layout.add(r.entity, [r])
        self._new_gather(layout)

    def _new_gather(self, layout: GatherLayout) -> None:
        """A gather buffer and ring with room for ``layout`` and as much again, so spawns
        rarely reallocate. The old ring finishes its maps first: its buffers must never be freed
        or reused while mapped or pending (WGPU_NOTES: a submit touching one aborts)."""
        if getattr(self, "_ring", None) is not None:
            assert self._ring is not None and self._gather is not None   # made together
            self._ring.destroy()
            self._gather.destroy()
        self._readback_layout = layout
        self._gather: wgpu.GPUBuffer | None = None
        self._ring: ReadbackRing | None = None
        if layout.end:
            capacity = max(READBACK_MIN_BYTES, 2 * layout.end)
            self._gather = self.device.create_buffer(
                label="readback/gather", size=capacity,
                usage=wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC)
            self._ring = ReadbackRing(self.device, capacity)
        self._invalidate_graphs()

    def _invalidate_graphs(self) -> None:
        """Ask the systems for their passes again before the next encode."""
        self._stale_graphs.update(self._graphs)
        self._graphs.clear()

    def _graph(self, output_format: str) -> FrameGraph:
        graph = self._graphs.get(output_format)
        if graph is None:
            passes = [p for s in self._system_objects() for p in s.passes()]
            for r, offset in self._readback_layout:
                passes.append(Pass(f"{r.entity}:{r.system}:readback", Phase.READBACK,
                                   CopyBuffer(r.buffer, self._gather, r.size, r.offset, offset),
                                   reads=(r.resource,), writes=("readback/gather",)))
            pipeline, bind_group = self._present_pipeline(output_format)
            passes.append(Pass("scene:frame:present", Phase.POST,
                               Draw(pipeline, (bind_group,), target="output", vertices=3),
                               reads=("scene/color",), writes=("output",)))
            uploaded = {"frame", "scene/color"}  # the frame uniform; the cleared scene target
            for s in self._system_objects():
                uploaded |= s.uploaded()
            graph = FrameGraph(passes, uploaded, previous=self._stale_graphs.get(output_format))
            self._graphs[output_format] = graph
        return graph

    def _present_pipeline(self, output_format: str):
        if output_format not in self._present:
            module = wgsl.create_module(self.device, "frame/present.wgsl")
            pipeline = self.device.create_render_pipeline(
                label=f"scene:frame:present:{output_format}", layout="auto",
                vertex={"module": module, "entry_point": "vs_main"},
                primitive={"topology": "triangle-list"},
                fragment={"module": module, "entry_point": "fs_main",
                          "constants": {"ENCODE_SRGB": not output_format.endswith("-srgb")},
                          "targets": [{"format": output_format}]})
            bind_group = self.device.create_bind_group(
                layout=pipeline.get_bind_group_layout(0),
                entries=[{"binding": 0, "resource": self._scene_texture.create_view()}])
            self._present[output_format] = (pipeline, bind_group)
        return self._present[output_format]

    # simulation --------------------------------------------------------------------------------
    def step(self, frames: int = 1) -> None:
        """Advance the simulation by ``frames`` fixed steps."""
        for _ in range(step_count(frames)):
            self.scripts.update(self.clock.fixed_dt)   # their edits apply to this step
            applied = self._sync_components()
            try:
                self._simulate_one()
            except Exception:
                live_edits.undo(self, applied)   # a valid-looking value the step could not use
                raise

    def advance(self, real_dt: float) -> int:
        """Interactive clock: run the whole fixed steps that ``real_dt`` seconds make."""
        n = self.clock.advance(seconds(real_dt, "advance(real_dt)"))
        self.step(n)
        return n

    def _simulate_one(self) -> None:
        t0 = time.perf_counter()
        info = StepInfo(frame=self.clock.steps, dt=self.clock.fixed_dt,
                        seed=self.scene.settings.seed)
        for system in self._system_objects():
            system.before_step(info)
        encoder = self.device.create_command_encoder(label=f"emberfx:step:{info.frame}")
        profiler = self._profiler
        # Each readback maps a buffer, and every map wakes wgpu-py's poll thread (about 1 ms of
        # GIL hand-over on a small CPU), so an interactive loop may read every few steps; the
        # gather copies (the READBACK phase) are then left out too.
        due = info.frame % self.readback_every == 0
        ring = self._ring if due else None
        slot = ring.acquire() if ring is not None else None
        phases = SIMULATION_PHASES if slot is not None else SIMULATION_PHASES - {Phase.READBACK}
        self._graph(OUTPUT_FORMAT).encode(encoder, {}, phases=phases, profiler=profiler)
        if ring is not None and slot is not None:
            encoder.copy_buffer_to_buffer(self._gather, 0, slot.buffer, 0, ring.size)
        self.device.queue.submit([encoder.finish()])
        if ring is not None and slot is not None:
            ring.submitted(slot, info.frame)
        if profiler is not None:
            profiler.submitted()
        self.clock.tick()
        self._encode_seconds = time.perf_counter() - t0

    def _sync_components(self) -> list:
        """Apply the edits made through entity() since the last call (live_edits.sync)."""
        return live_edits.sync(self)

    # entities at run time ----------------------------------------------------------------------
    def spawn(self, name: str, components: dict) -> EntityView:
        """Add an entity now: ``{"emitter": Emitter(...) or {field: value}, ...}``, validated as
        a scene file's entity is; the entity holds validated copies (edit them through the
        returned view)."""
        entity_name(name, "spawn(name)")
        if name in self._entities:
            raise EmberError(f"spawn: an entity named '{name}' exists already")
        types = registry.component_types()
        built = checked_components(components, name, path=self.scene.path, label="spawn")
        live_edits.check_references(self, name, built, "spawn")
        with in_world(self._world):
            eid = esper.create_entity(Name(name), *built.values())
        # entities are kept in index order (scene order, then spawns), so the last one has the
        # highest index: looking it up costs the same in a world of any size
        last = next(reversed(self._entities.values()), None)
        ref = EntityRef(name, last.index + 1 if last is not None else 0, eid)
        self._entities[name] = ref
        self._components[name] = built
        self._shared.world.added(name)
        try:
            self._attach(name, types)
        except Exception:
            self.delete(name)   # release what was attached; the world is as before the call
            raise
        self._world_changed(spawned=name)
        return self.entity(name)

    def delete(self, name: str) -> None:
        """Remove an entity and release its GPU resources."""
        ref = self._ref(name)
        for key, owner in list(self._added):
            if owner == name:
                self._systems[key].remove(ref)
                self._added.remove((key, owner))
        with in_world(self._world):
            esper.delete_entity(ref.eid, immediate=True)
        for key in self._components.pop(name):
            self._snapshots.pop((name, key), None)
        del self._entities[name]
        self._shared.world.removed(name)
        self._world_changed(deleted=name)

    # hot reload --------------------------------------------------------------------------------
    def reload(self, scene, changed_files=()):
        """Turn the running scene into ``scene`` (validated, e.g. the file after an edit) and
        return the ReloadPlan applied. Unchanged entities keep their GPU state; an edited
        component takes the file's values (live fields rewrite a uniform, reload-class fields
        rebuild that entity). If a step fails (e.g. a capacity the device refuses) everything done
        so far is undone and the error is raised: the last good scene keeps running."""
        from emberfx.hot_reload import plan_reload
        from emberfx.scripting import check_script_locations

        scene = checked_scene(scene, "reload(scene)")
        check_script_locations(scene, self.script_policy)   # refused before anything changes
        plan = plan_reload(self.scene, scene, changed_files)
        if plan.restart:
            self._restart(scene)
        elif not plan.empty:
            self._apply(plan, scene)
        if plan.camera or scene.settings.size != self.scene.settings.size:
            self.camera = scene.camera.with_reference(scene.settings.size)
        if plan.background:
            self._background = linear_color(scene.settings.background)
            self._make_targets()
        old_scene, self.scene = self.scene, scene
        if plan.scripts or plan.restart or scene.path != old_scene.path:
            from emberfx.scripting import Scripts

            if plan.restart:   # a new world starts its scripts afresh (the window's input stays)
                self.scripts = Scripts(self, inputs=self.scripts.input)
            else:
                self.scripts = Scripts(self, previous=self.scripts)
                if self.scripts.started:
                    self.scripts.start()   # on_start for the scripts the edit added
        return plan

    def _apply(self, plan, scene) -> None:
        new_specs = {s.name: s for s in scene.entities}
        undo: list[Callable[..., object]] = []   # run newest-first when a later step fails
        try:
            for name, key in plan.updated:
                live = self._components[name][key]
                before = copy.deepcopy(live)
                undo.append(lambda live=live, before=before: copy_fields(before, live))
                copy_fields(new_specs[name].components[key], live)
            self._sync_components()
            for name, key in plan.refreshed:
                self._systems[key].rebuild(self._entities[name], self._components[name][key])
            for name in plan.added:
                self.spawn(name, copy.deepcopy(new_specs[name].components))
                undo.append(lambda name=name: self.delete(name))
            for name in plan.respawned:
                old = self._components[name]
                self.delete(name)
                undo.append(lambda name=name, old=old: self.spawn(name, old))
                self.spawn(name, copy.deepcopy(new_specs[name].components))
                undo.append(lambda name=name: self.delete(name))
        except Exception:
            for step in reversed(undo):
                step()
            self._sync_components()   # rebuild what the restored fields need
            self._setup_readback()
            raise
        for name in plan.removed:
            self.delete(name)

    def _restart(self, scene) -> None:
        """A new world for a new seed or timestep. If the new one cannot be built, the old
        scene starts again from its beginning (its GPU state went with its world)."""
        old = (self.scene, self.clock, self._shared.seed, self._shared.fixed_dt)
        self._release_world()
        self._world = f"emberfx-{next(_world_ids)}"
        self.scene, self.clock = scene, FixedClock(scene.settings.fixed_dt)
        self._shared.seed, self._shared.fixed_dt = scene.settings.seed, scene.settings.fixed_dt
        try:
            self._build_world()
        except Exception:
            self._release_world()
            self._world = f"emberfx-{next(_world_ids)}"
            self.scene, self.clock, self._shared.seed, self._shared.fixed_dt = old
            self._build_world()
            raise

    def _world_changed(self, spawned: str | None = None, deleted: str | None = None) -> None:
        """After a spawn or delete: the systems adapt (e.g. to a new force), and only that
        entity's readback regions are added or removed, so the cost does not grow with the
        number of entities (the graph is rebuilt lazily, at the next encode)."""
        for system in self._system_objects():
            system.world_changed()
        layout = self._readback_layout
        if deleted is not None:
            layout.remove(deleted)
        if spawned is not None:
            ref = self._entities[spawned]
            systems = {id(s): s for key in self._components[spawned]
                       if (s := self._systems.get(key)) is not None}
            for system in systems.values():
                layout.add(spawned, system.readbacks_of(ref))
        if layout.end > (self._gather.size if self._gather is not None else 0):
            self._new_gather(layout.compacted())
        else:
            self._invalidate_graphs()

    # drawing -----------------------------------------------------------------------------------
    def _write_frame_uniform(self) -> None:
        # The camera part is recomputed only when the camera or the size changed (most frames
        # only the clock moves); the record is kept and rewritten whole (it is 128 bytes).
        cam = self.camera
        key = (snapshot(cam), self.size)
        if key != self._frame_key:
            self._frame_key = key
            w, h = self.size
            view = cam.view_matrix()
            proj = cam.projection_matrix(w / h)
            rec = self._frame_record
            rec["view_proj"] = (proj @ view).T   # WGSL matrices are column-major
            rec["camera_right"] = (*view[0, :3], 0.0)
            rec["camera_up"] = (*view[1, :3], 0.0)
            eye = np.linalg.inv(view)[:3, 3]
            rec["camera_position"] = (*eye, 1.0 if cam.kind == "perspective" else 0.0)
            rec["viewport"] = (w, h)
        self._frame_record["time"] = self.clock.time
        self._frame_record["frame"] = self.clock.steps
        self.device.queue.write_buffer(self._frame_uniform, 0, self._frame_record.tobytes())

    def draw_to(self, texture) -> None:
        """Render the current state into ``texture`` (any colour format; e.g. a window surface)."""
        self._sync_components()   # edits made since the last step show in this frame
        w, h = texture.size[:2]
        if (w, h) != self.size:
            self.size = self._checked_size((w, h))
            self._make_targets()
        self._write_frame_uniform()
        encoder = self.device.create_command_encoder(label="emberfx:draw")
        self.encode(encoder, texture, DRAWING_PHASES)
        self.device.queue.submit([encoder.finish()])
        if self._profiler is not None:
            self._profiler.submitted()

    def encode(self, encoder, texture, phases=None) -> None:
        """Record this frame's passes of ``phases`` (default: all) with ``texture`` as output.
        While profiling, the times of an encoder submitted elsewhere are dropped (nobody tells
        the profiler about that submit), never misread."""
        targets = {"scene": self._scene_target,
                   "output": RenderTarget(texture.create_view(), (0.0, 0.0, 0.0, 1.0),
                                          color_format=texture.format)}
        self._graph(texture.format).encode(encoder, targets, phases=phases,
                                           clear_targets=("scene",), profiler=self._profiler,
                                           bundles=self._bundles)

    def render(self) -> np.ndarray:
        """The current state as an (h, w, 4) uint8 RGBA image (sRGB)."""
        self.draw_to(self._output_texture)
        w, h = self.size
        data = self.device.queue.read_texture(
            {"texture": self._output_texture, "origin": (0, 0, 0), "mip_level": 0},
            {"offset": 0, "bytes_per_row": w * 4, "rows_per_image": h}, (w, h, 1))
        return np.frombuffer(data, np.uint8).reshape(h, w, 4).copy()

    # inspection --------------------------------------------------------------------------------
    def _ref(self, name: str, what: str = "entity name") -> EntityRef:
        entity_name(name, what)
        if name not in self._entities:
            import difflib

            close = difflib.get_close_matches(name, self._entities, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise EmberError(f"no entity named '{name}' in scene "
                             f"'{self.scene.settings.name}'{hint}")
        return self._entities[name]

    def entity(self, name: str) -> EntityView:
        ref = self._ref(name, "entity(name)")
        return EntityView(ref.name, self._components[ref.name])

    def entity_names(self) -> list[str]:
        return list(self._entities)

    def components_of(self, name: str) -> dict[str, object]:
        """The entity's live components by key (edit their fields; the next step applies them)."""
        return self._components[self._ref(name).name]

    def entities_with(self, key: str) -> list:
        """``[(EntityRef, component), ...]`` for every entity with a ``key`` component, in order."""
        return self._shared.world.components(key)

    def system_of(self, name: str, key: str):
        """The system object that runs entity ``name``'s ``key`` component (tests, tools)."""
        components = self._components[self._ref(name).name]
        if key not in components or key not in self._systems:
            raise EmberError(f"entity '{name}' has no {key} system; its components: "
                             f"{', '.join(components) or 'none'}")
        return self._systems[key]

    def state(self, name: str) -> dict[str, np.ndarray]:
        """The entity's GPU state as numpy arrays (a blocking read: not for every frame)."""
        ref = self._ref(name, "state(name)")
        out: dict[str, np.ndarray] = {}
        for key in self._components[ref.name]:
            system = self._systems.get(key)
            if system is not None:
                out.update(system.state(ref))
        return out

    def passes(self) -> list[str]:
        return self._graph(OUTPUT_FORMAT).names()

    def frame_passes(self, phases=None) -> list[Pass]:
        """This frame's ``Pass`` objects in the order ``encode`` records them, those of
        ``phases`` (Phase values; default: all). Tools and benchmarks time a part of the frame
        by encoding these in a ``FrameGraph`` of their own."""
        if phases is not None:
            phases = set(phases)
            bad = [p for p in phases if not isinstance(p, Phase)]
            if bad:
                raise EmberError(f"frame_passes(phases): expected Phase values "
                                 f"({', '.join(p.name for p in Phase)}), found {bad[0]!r}")
        return [p for p in self._graph(OUTPUT_FORMAT).order
                if phases is None or p.phase in phases]

    @property
    def profiling(self) -> bool:
        """Per-pass timing for an inspector (off by default: it splits shared GPU passes)."""
        return self._profiler is not None

    @profiling.setter
    def profiling(self, on: bool) -> None:
        if on and self._profiler is None:
            self._profiler = PassProfiler(self.device)
        elif not on and self._profiler is not None:
            self._profiler.close()
            self._profiler = None

    def pass_times(self) -> dict[str, float]:
        """Milliseconds per compute and render pass of the current frame graph, a moving average
        one or two frames old ({} when not profiling or before the first results arrive). Where
        they come from: ``stats()["pass_time_source"]`` ("gpu timestamps" or "cpu encode")."""
        if self._profiler is None:
            return {}
        current = set(self.passes())   # entities deleted since drop out
        return {name: ms for name, ms in self._profiler.times().items() if name in current}

    def stats(self) -> dict:
        """Counters from the readback ring (one or two steps old), the clock and the adapter."""
        latest = self._ring.poll() if self._ring is not None else None
        per_entity: dict[str, bytes] = {}
        if latest is not None:
            _, data = latest
            for r, offset in self._readback_layout:
                per_entity[r.entity] = data[offset:offset + r.size]
        entities = {}
        for name, components in self._components.items():
            info = {}
            for key in components:
                system = self._systems.get(key)
                if system is not None:
                    info.update(system.stats(self._entities[name], per_entity))
            entities[name] = info
        return {
            "frame": self.clock.steps,
            "time": self.clock.time,
            "adapter": self.gpu.label,
            "size": self.size,
            "readback_frame": latest[0] if latest else None,
            "readback_skipped": self._ring.skipped if self._ring else 0,
            "step_cpu_ms": self._encode_seconds * 1e3,
            "compute_passes_per_step": self._graph(OUTPUT_FORMAT).compute_pass_count(
                SIMULATION_PHASES, profiler=self._profiler),
            "pass_time_source": self._profiler.source if self._profiler is not None else None,
            "entities": entities,
        }

    def close(self) -> None:
        """Release the GPU resources and the esper world. Calling it again does nothing; every
        other method then raises EngineClosedError. Only the creating thread may close an open
        Engine, unless that thread has ended (nothing can be using the Engine then)."""
        if self._owner_ident is None:
            return
        if self._owner_ident != threading.get_ident() and self._owner.is_alive():
            raise refusal(self, "close")
        try:
            self._release_world()
            self._release_targets()
        finally:
            self._owner_ident = None   # closed, even if releasing failed half-way

    def _release_targets(self) -> None:
        """close() only (a restart keeps them): the frame uniform, render targets and readback
        buffers are destroyed now, not when the caller drops its last reference to the Engine."""
        if self._bundles is not None:   # None: draws encoded directly (no bundle cache)
            self._bundles.clear()
        self._present.clear()
        self._graphs.clear()
        self._stale_graphs.clear()
        for name in ("_scene_texture", "_depth_texture", "_output_texture", "_frame_uniform",
                     "_gather", "_ring"):
            resource = getattr(self, name, None)
            if resource is not None:
                resource.destroy()   # the ring drains its maps first

    def _release_world(self) -> None:
        """What close() releases; a restart (reload with a new seed) then builds a new world."""
        ring: ReadbackRing | None = getattr(self, "_ring", None)
        if ring is not None:
            ring.drain()
        profiler: PassProfiler | None = getattr(self, "_profiler", None)
        if profiler is not None:
            profiler.close()   # waits for its maps only; profiling goes on after a restart
        for key, name in reversed(getattr(self, "_added", [])):
            self._systems[key].remove(self._entities[name])
        self._added = []
        self._systems = {}
        with in_world("default"), contextlib.suppress(KeyError):   # KeyError: never created
            esper.delete_world(self._world)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
