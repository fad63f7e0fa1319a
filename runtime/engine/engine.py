"""The Engine: one scene's entities, systems, frame graph and render targets, behind one facade.

    engine = Engine(load_scene("scenes/fountain.toml"), size=(640, 360))
    engine.step(120)                 # 120 fixed steps of scene.fixed_dt
    image = engine.render()          # (360, 640, 4) uint8
    engine.state("fountain")["alive"].sum()

The Engine owns five parts and coordinates them: world.py (the esper world, entities by name,
their components and systems), reload.py (reload transactions), renderer.py (targets, frame
graph, frame uniform, present), telemetry.py (readback ring, stats, profiler) and stepper.py
(a fixed step's encoding and submission; the readback layout and frame graph kept in step with
the world). ``step`` encodes the CLEAR, SIMULATE, PREPARE and READBACK phases once per fixed
step (stepper.py); ``render``/
``draw_to`` encode RENDER and POST for the current state. Each is a submission of its own,
except inside ``with engine.frame():``, where a step's encoder stays open for the draw that
follows and they share one (core/submission.py). The window and the CLI are thin faces over
this class.

Every public method first checks the rules of engine_guard.py: the Engine is open (close() is
final), it is used from the thread that created it, and esper is switched to its own world
(``engine.world`` names it, for querying it with esper directly). Edits of live components
(``engine.entity("jet").emitter.rate = 900``) mark them dirty; live_edits.py applies them.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from emberfx.core.clock import FixedClock
from emberfx.core.errors import EmberError
from emberfx.core.frame_graph import Pass, PassTable, pass_table
from emberfx.core.gpu import get_context
from emberfx.core.readback import reading
from emberfx.core.resources import Resources
from emberfx.core.shader_cache import release_idle
from emberfx.core.step_batches import KEY as STEP_BATCHING
from emberfx.core.system import EntityRef, SharedResources, StepInfo
from emberfx.engine import app_hooks, interrupts, live_edits
from emberfx.engine.engine_guard import (
    checked_components,
    checked_scene,
    device_size,
    entity_name,
    guard_public_methods,
    phase_set,
    refusal,
    render_size,
    seconds,
    step_budget,
    step_count,
)
from emberfx.engine.reload import Reloader
from emberfx.engine.renderer import OUTPUT_FORMAT, Renderer, frame_uniform_buffer
from emberfx.engine.stepper import Stepper
from emberfx.engine.telemetry import Telemetry
from emberfx.engine.world import EntityView, Name, World, WorldHandle
from emberfx.model import registry
from emberfx.model.colors import linear_color

if TYPE_CHECKING:
    from emberfx.core.step_batches import StepBatching
    from emberfx.systems.cloth.tuning import ClothTuning
    from emberfx.systems.emitter.tuning import EmitterTuning

__all__ = ["OUTPUT_FORMAT", "Engine", "EntityView", "Name"]   # tools import these from here


# engine_guard: open, owner thread, own world; ``world`` checks the first two and switches
# only for the calls made through it, so ``with engine.world:`` restores the caller's world
@guard_public_methods(exempt=("close", "world"))
class Engine:
    def __init__(self, scene, size: tuple[int, int] | None = None, *, scripts=True,
                 script_timeout: float | None = None, batching: bool = True,
                 emitter_tuning: EmitterTuning | None = None,
                 cloth_tuning: ClothTuning | None = None,
                 step_batching: StepBatching | None = None):
        """``scripts``: False (or EMBERFX_NO_SCRIPTS=1) runs none of the scene's scripts; a
        ``ScriptPolicy`` also sets the time limit and allows scripts outside the scene's folder.
        ``script_timeout``: seconds a hook may run (default 5; 0: no limit). ``batching``:
        False runs every emitter alone (the same results, more passes: for comparison).
        ``emitter_tuning``: how the emitters step and cull (an
        ``emberfx.systems.emitter.tuning.EmitterTuning``; default ``DEFAULT``): which path of
        the ordered step they take and its shape, for comparison and tests. ``cloth_tuning``:
        how the cloth patches step (an ``emberfx.systems.cloth.tuning.ClothTuning``; default
        ``DEFAULT``). ``step_batching``: how every family's prewarm sends its steps to the GPU
        (an ``emberfx.core.step_batches.StepBatching``: steps and work per submission, and
        from how much work a prewarm says that it runs)."""
        from emberfx.engine.scripting import Scripts, check_script_locations, script_policy

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
        self.size = device_size(size if size is not None else scene.settings.size, self.gpu)
        self.readback_every = 1   # steps between counter readbacks (the window reads fewer)
        self._frames_open = 0     # depth of frame() blocks: a step may hold its encoder
        self.resources = Resources(self.gpu)   # every GPU buffer and texture, by name
        frame_uniform = frame_uniform_buffer(self.device)
        self.resources.adopt("frame", frame_uniform)
        self._shared = SharedResources(frame_uniform=frame_uniform, resources=self.resources,
                                       fixed_dt=scene.settings.fixed_dt, seed=scene.settings.seed,
                                       resolve=scene.resolve, scene_path=scene.path,
                                       batching=bool(batching),
                                       sample_count=scene.render.msaa,
                                       tuning={key: value for key, value in (
                                           ("emitter", emitter_tuning), ("cloth", cloth_tuning),
                                           (STEP_BATCHING, step_batching))
                                           if value is not None})
        self._store = World(self.gpu, self._shared)
        self._telemetry = Telemetry(self.gpu, self.resources)
        self._renderer = Renderer(self.device, self._shared,
                                  linear_color(scene.settings.background),
                                  self._store, self._telemetry, scene.light)
        self._stepper = Stepper(self.device, self.resources, self._store, self._renderer,
                                self._telemetry)
        self._reloader = Reloader(self, self._store, build_world=self._build_world,
                                  release_world=self._release_world, sync=self._sync_components,
                                  lay_out_readback=self._stepper.lay_out,
                                  retarget=self._retarget, adopt=self._adopt)
        self._renderer.make_targets(self.size)
        try:
            self._build_world()
        except Exception:
            self.close()   # release what was built and the esper world before reporting
            raise
        self.scripts = Scripts(self)

    @property
    def _world(self) -> str:
        """The name of this Engine's esper world (engine_guard switches to it on every call)."""
        return self._store.esper_world

    @property
    def world(self) -> WorldHandle:
        """The Engine's esper world: ``with engine.world: esper.get_components(Name, Emitter)``,
        or ``engine.world.get_components(...)``, ``.get_component(cls)``, ``.entity(name)``
        (the esper entity id) and ``.name``; the components are the live ones."""
        self._check_usable("world")
        return WorldHandle(self._store, lambda: self._check_usable("world"),
                           lambda name: self._ref(name, "world.entity(name)"))

    def _check_usable(self, what: str) -> None:
        if self._owner_ident != threading.get_ident():
            raise refusal(self, what)

    # construction ------------------------------------------------------------------------------
    def _system_objects(self) -> tuple:
        """Each system object once (tests check which families a scene makes)."""
        return self._store.system_objects()

    def _build_world(self) -> None:
        # a reload that changed [render] msaa restarts the world: new targets, then new pipelines
        self._renderer.set_sample_count(self.scene.render.msaa)
        self._store.build(self.scene.entities)
        self._stepper.lay_out()

    def _adopt(self, *, scene=None, clock: FixedClock | None = None, camera=None,
               scripts=None) -> None:
        """What a reload changes of the Engine itself, those given (reload.py calls this): the
        scene it runs, a new world's clock (the systems' seed and timestep are then the
        scene's), the live camera, the scripts."""
        if scene is not None:
            self.scene = scene
        if clock is not None:
            self.clock = clock
            self._shared.seed, self._shared.fixed_dt = self.scene.settings.seed, clock.fixed_dt
        if camera is not None:
            self.camera = camera
        if scripts is not None:
            self.scripts = scripts

    def _retarget(self, background) -> None:
        self._renderer.background = background
        self._renderer.make_targets(self.size)

    # simulation --------------------------------------------------------------------------------
    def step(self, frames: int = 1) -> None:
        """Advance the simulation by ``frames`` fixed steps (engine_guard.step_budget: at most
        MAX_STEPS_PER_CALL a call). Ctrl-C stops a call of several steps between two steps."""
        count = step_budget(step_count(frames), "step(frames)", done=self.clock.steps,
                            fixed_dt=self.clock.fixed_dt,
                            seconds_per_step=self._telemetry.step_seconds)
        with interrupts.deferred() if count > 1 else contextlib.nullcontext():
            for _ in range(count):
                interrupts.check()
                # their edits apply to this step; on_event hears the GPU's counts first
                self.scripts.update(self.clock.fixed_dt, self._stepper.counted_events)
                applied = self._sync_components()
                try:
                    self._simulate_one()
                except Exception:
                    live_edits.undo(self._store, applied)   # a value it could not use
                    raise

    @contextlib.contextmanager
    def frame(self) -> Iterator[Engine]:
        """One submission for the steps and the draw inside the block, as a window's frame:

            with engine.frame():
                engine.advance(dt)
                engine.draw_to(texture)

        The last step's command encoder stays open and ``draw_to`` records into it, which saves
        the host the making, finishing and submitting of one encoder a frame. Results are the
        same as without the block: any other Engine call inside it, a write to a buffer the step
        uses, or leaving the block submits the step first (core/submission.py)."""
        self._frames_open += 1
        try:
            yield self
        finally:
            self._frames_open -= 1
            if not self._frames_open:
                self.resources.submit_held()

    def advance(self, real_dt: float) -> int:
        """Interactive clock: run the whole fixed steps that ``real_dt`` seconds make."""
        n = self.clock.advance(seconds(real_dt, "advance(real_dt)"))
        self.step(n)
        return n

    def _simulate_one(self) -> None:
        t0 = time.perf_counter()
        self.resources.submit_held()   # the previous step of a frame() block, held
        info = StepInfo(frame=self.clock.steps, dt=self.clock.fixed_dt,
                        seed=self.scene.settings.seed)
        self._stepper.simulate(info, readback_every=self.readback_every,
                               frame_open=self._frames_open > 0)
        self.clock.tick()
        self._telemetry.step_seconds = time.perf_counter() - t0

    def _sync_components(self) -> list:
        """Apply the edits made through entity() since the last call (live_edits.sync)."""
        return live_edits.sync(self._store, self.scene.path,
                               invalidate_graphs=self._renderer.invalidate_graphs,
                               lay_out_readback=self._stepper.lay_out)

    # entities at run time ----------------------------------------------------------------------
    def spawn(self, name: str, components: dict) -> EntityView:
        """Add an entity now: ``{"emitter": Emitter(...) or {field: value}, ...}``, validated as
        a scene file's entity is; the entity holds validated copies (edit them through the
        returned view)."""
        entity_name(name, "spawn(name)")
        if name in self._store.entities:
            raise EmberError(f"spawn: an entity named '{name}' exists already")
        types = registry.component_types()
        built = checked_components(components, name, path=self.scene.path, label="spawn")
        live_edits.check_references(self._store, self.scene.path, name, built, "spawn")
        self._store.add(name, built)
        try:
            self._store.attach(name, types)
        except Exception:
            self.delete(name)   # release what was attached; the world is as before the call
            raise
        self._stepper.world_changed(spawned=name)
        return self.entity(name)

    def delete(self, name: str) -> None:
        """Remove an entity and release its GPU resources."""
        self._store.remove(self._ref(name))
        self._stepper.world_changed(deleted=name)

    # hot reload --------------------------------------------------------------------------------
    def reload(self, scene, changed_files=()):
        """Turn the running scene into ``scene`` (validated, e.g. the file after an edit) and
        return the ReloadPlan applied. Unchanged entities keep their GPU state; an edited
        component takes the file's values (live fields rewrite a uniform, rebuild-class fields
        rebuild that entity). If a step fails (e.g. a capacity the device refuses) everything done
        so far is undone and the error is raised: the last good scene keeps running."""
        return self._reloader.reload(scene, changed_files)

    # drawing -----------------------------------------------------------------------------------
    def draw_to(self, texture, *, transparent: bool = False, phases=None) -> None:
        """Render the current state into ``texture`` (any colour format; e.g. a window surface);
        ``transparent``: for compositing (renderer.py); ``phases``: default RENDER and POST."""
        if self._store.dirty:   # applying an edit may rebuild what a held step binds
            self.resources.submit_held()
        self._sync_components()   # edits made since the last step show in this frame
        w, h = texture.size[:2]
        if (w, h) != self.size:
            self.size = device_size((w, h), self.gpu)
            self._renderer.make_targets(self.size)
        extra = {} if phases is None else {"phases": phases}
        self._renderer.draw(texture, self.camera, self.clock, self.scene.light,
                            transparent=transparent, **extra)

    def encode(self, encoder, texture, phases=None) -> None:
        """Record this frame's passes of ``phases`` (default: all) with ``texture`` as output.
        While profiling, the times of an encoder submitted elsewhere are dropped (nobody tells
        the profiler about that submit), never misread."""
        self._renderer.encode(encoder, texture, phases)

    def render(self, transparent: bool = False) -> np.ndarray:
        """The current state as an (h, w, 4) uint8 RGBA image (sRGB). ``transparent``: alpha 0
        where nothing was drawn and straight colour elsewhere, for compositing."""
        # the normal render calls draw_to(texture) as it always did (subclasses override it)
        self.draw_to(self._renderer.output_texture, **({"transparent": True} if transparent
                                                        else {}))
        with reading(self._frame_label()):
            return self._renderer.read_output()

    def render_hdr(self, transparent: bool = False) -> np.ndarray:
        """The scene target before post effects (tonemapping): (h, w, 4) float16, linear RGBA
        (engine/captures.py)."""
        from emberfx.engine.captures import hdr_frame
        with reading(self._frame_label()):
            return hdr_frame(self, self._renderer, transparent=transparent)

    def render_depth(self) -> np.ndarray:
        """Linear view depth in world units, (h, w) float32, inf where nothing wrote depth
        (engine/captures.py)."""
        from emberfx.engine.captures import depth_frame
        with reading(self._frame_label()):
            return depth_frame(self, self._renderer)

    def _frame_label(self) -> str:
        names = list(self._store.entities)
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        return f"the frame of step {self.clock.steps} (entities: {shown or 'none'})"

    def export(self, folder, format: str = "npz") -> list:
        """Write the current state of every emitter, particle-life swarm, cloth and fluid to
        ``folder`` as point caches (npz, ply or usd), and of every gas as a grid (npz;
        app/export.py); returns the paths."""
        return app_hooks.hook(app_hooks.EXPORT)(self, folder, format)

    def _repr_png_(self) -> bytes | None:
        """Jupyter shows an Engine as its current frame; a closed one falls back to its repr."""
        if self._owner_ident is None:
            return None
        return app_hooks.hook(app_hooks.PNG)(self)

    def video(self, frames: int = 120, fps: float | None = None):
        """Step ``frames`` fixed steps and return them as an inline MP4 for Jupyter
        (``IPython.display.Video``; needs the notebook extra): app/notebook.py."""
        return app_hooks.hook(app_hooks.VIDEO)(self, frames, fps)

    def web(self, path=None, frames: int | None = None, size: tuple[int, int] | None = None):
        """Write this Engine's scene as one self-contained web page that replays ``frames``
        steps from the start with the browser's WebGPU (emberfx.web; default 300 steps, this
        Engine's size); returns the path. Without a path: the page as an IPython HTML display
        that plays in a notebook cell (needs the notebook extra)."""
        return app_hooks.hook(app_hooks.WEB)(self, path, frames, size or self.size)

    # inspection --------------------------------------------------------------------------------
    def _ref(self, name: str, what: str = "entity name") -> EntityRef:
        entity_name(name, what)
        return self._store.ref(name, self.scene.settings.name)

    def entity(self, name: str) -> EntityView:
        return self._store.view(self._ref(name, "entity(name)"))

    def entity_ref(self, name: str) -> EntityRef:
        """The handle a system's methods take: ``system_of(name, key).paint(entity_ref(name),
        ...)`` (script actions and pointer tools of a family)."""
        return self._ref(name, "entity_ref(name)")

    def entity_names(self) -> list[str]:
        return list(self._store.entities)

    def components_of(self, name: str) -> dict[str, object]:
        """The entity's live components by key (edit their fields; the next step applies them)."""
        return self._store.components_of(self._ref(name).name)

    def entities_with(self, key: str) -> list:
        """``[(EntityRef, component), ...]`` for every entity with a ``key`` component, in order."""
        return self._store.query(key)

    def system_of(self, name: str, key: str):
        """The system object that runs entity ``name``'s ``key`` component (tests, tools)."""
        return self._store.system_of(self._ref(name), key)

    def set_field(self, name: str, array) -> None:
        """Replace vector field ``name``'s samples (a force_field of kind "vector_field") with a
        float32 (D, H, W, 3) array, from the next step on (scripts: ``ctx.set_field``)."""
        self._check_usable("set_field")
        self._ref(name, "set_field(name)")
        registry.script_actions()["set_field"](self, name, array)

    def passes_changed(self) -> None:
        """A family changed what its passes bind outside a live edit (a vector field's samples
        set from Python may need a larger buffer): the systems adapt now and the frame graph is
        rebuilt before the next step or frame."""
        self._stepper.world_changed()

    def state(self, name: str) -> dict[str, np.ndarray]:
        """The entity's GPU state as numpy arrays (a blocking read: not for every frame)."""
        ref = self._ref(name, "state(name)")
        with reading(f"entity '{name}'"):
            return self._store.state(ref)

    def passes(self) -> list[str]:
        return self._renderer.graph(OUTPUT_FORMAT).names()

    def pass_table(self) -> PassTable:
        """``frame_passes()`` (each says what it does) and the phases' work done without a pass
        of its own: host writes, work folded into a pass, the readback's direct copy."""
        return pass_table(self.frame_passes(), self._telemetry.folded())

    def frame_passes(self, phases=None) -> list[Pass]:
        """This frame's ``Pass`` objects in the order ``encode`` records them, those of
        ``phases`` (Phase values; default: all). Tools and benchmarks time a part of the frame
        by encoding these in a ``FrameGraph`` of their own."""
        phases = phase_set(phases, "frame_passes(phases)")
        return [p for p in self._renderer.graph(OUTPUT_FORMAT).order
                if phases is None or p.phase in phases]

    @property
    def profiling(self) -> bool:
        """Per-pass timing for an inspector (off by default: it splits shared GPU passes)."""
        return self._telemetry.profiler is not None

    @profiling.setter
    def profiling(self, on: bool) -> None:
        self._telemetry.set_profiling(on)

    def pass_times(self) -> dict[str, float]:
        """Milliseconds per compute and render pass of the current frame graph, a moving average
        one or two frames old ({} when not profiling or before the first results arrive). Where
        they come from: ``stats()["pass_time_source"]`` ("gpu timestamps" or "cpu encode")."""
        if self._telemetry.profiler is None:
            return {}
        return self._telemetry.pass_times(set(self.passes()))   # deleted entities drop out

    def stats(self) -> dict:
        """Counters from the readback ring (one or two steps old), the clock and the adapter."""
        return self._telemetry.stats(self._store, self._renderer.graph(OUTPUT_FORMAT),
                                     self.clock, self.gpu.label, self.size)

    def close(self) -> None:
        """Release the GPU resources and the esper world. Calling it again does nothing; every
        other method then raises EngineClosedError. Only the creating thread may close an open
        Engine, unless that thread has ended (nothing can be using the Engine then)."""
        if self._owner_ident is None:
            return
        if self._owner_ident != threading.get_ident() and self._owner.is_alive():
            raise refusal(self, "close")
        try:
            self.resources.submit_held()
            self._release_world()
            self.resources.release_all()   # what a failed add left behind
            # a restart keeps these; close() destroys them now, not when the caller drops its
            # last reference to the Engine
            self._renderer.release()
            self._telemetry.destroy()
            release_idle()   # the generated programs its emitters no longer hold
        finally:
            self._owner_ident = None   # closed, even if releasing failed half-way

    def _release_world(self) -> None:
        """What close() releases; a restart (reload with a new seed) then builds a new world."""
        self._telemetry.settle()
        self._store.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
