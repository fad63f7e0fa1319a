"""Live edits: ``engine.entity("jet").emitter.rate = 900.0`` from a script, the inspector or a
notebook. The Engine notices such edits before the next step or drawn frame and treats each
edited component as its scene file's table would be treated: validated (nested objects, such as
``emitter.shape``, and the entity names it refers to included) and refused in the loader's
words. A refused edit is undone: the component gets its last valid values back, so a rejected
value can never become the state a later rollback returns to.

Each live component has a ``Committed`` record, kept by the entity store (world.py) under
(entity, key): the
snapshot of its last valid values, to notice an edit cheaply every step, and a copy of them, to
put back.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable

from emberfx import registry
from emberfx.engine_guard import relabelled
from emberfx.errors import EmberError, SceneError
from emberfx.system import snapshot

UNDONE = "the edit is undone, the last valid values stay"


@dataclasses.dataclass(frozen=True, slots=True)
class Committed:
    """A live component's last valid values: ``values`` (its snapshot) to notice an edit,
    ``copy`` to put back when the edit is refused."""
    values: tuple
    copy: object


def committed(component) -> Committed:
    """The record of a component that is valid as it is (just validated or attached)."""
    return Committed(snapshot(component), copy.deepcopy(component))


def copy_fields(source, target) -> None:
    """Give ``target`` (a live component) the field values of ``source``, keeping its identity
    and that of its nested objects (``emitter.shape``): scripts and the inspector hold
    references to them."""
    for f in dataclasses.fields(target):
        value, current = getattr(source, f.name), getattr(target, f.name)
        if (type(current) is type(value) and dataclasses.is_dataclass(value)
                # typeshed's dataclass protocol does not declare __dataclass_params__
                and not type(value).__dataclass_params__.frozen):  # type: ignore[union-attr]
            copy_fields(value, current)
        else:
            setattr(target, f.name, copy.deepcopy(value))


def sync(world, scene_path, *, invalidate_graphs: Callable[[], None],
         lay_out_readback: Callable[[], None]) -> list[tuple[str, str, Committed]]:
    """Apply the edits made in ``world`` (the Engine's entity store) since the last sync: live
    fields flow into the next uniform write, reload-class fields (e.g. capacity) rebuild that
    entity's GPU resources, after which the readbacks are laid out again. An edit that is
    invalid, or that the device refuses, is undone and raised. Returns the edits applied, for
    ``undo`` should the step that uses them fail."""
    types = registry.component_types()
    applied = []
    for name, components in world.components.items():
        for key, component in components.items():
            before = world.snapshots[(name, key)]
            if snapshot(component) == before.values:
                continue
            valid = _checked_edit(world, scene_path, name, key, component, before)
            copy_fields(valid, component)   # the loader's types: tuples, no numpy values
            now = snapshot(component)
            fields = [f.name for f in dataclasses.fields(component)]
            changed = {f for f, a, b in zip(fields, before.values, now) if a != b}
            # A live field may change the passes (Life's steps_per_frame); a component lists
            # those in PASS_FIELDS, or, listing nothing, every field counts.
            pass_fields = getattr(component, "PASS_FIELDS", None)
            if pass_fields is None or changed & set(pass_fields):
                invalidate_graphs()
            system = world.systems.get(key) if types[key].system else None
            if system is not None and changed & set(getattr(component, "RELOAD_FIELDS", ())):
                try:
                    system.rebuild(world.entities[name], component)
                except EmberError:
                    copy_fields(before.copy, component)
                    system.add(world.entities[name], component)  # rebuild removed it
                    raise
                finally:
                    lay_out_readback()
            world.snapshots[(name, key)] = Committed(now, valid)
            applied.append((name, key, before))
    return applied


def undo(world, applied: list[tuple[str, str, Committed]]) -> None:
    """The step after these edits failed: the edited components get their last valid values
    back. Their snapshots keep the refused values, so the next sync sees a change and rebuilds
    what the restored values need (e.g. the old capacity)."""
    for name, key, before in applied:
        component = world.components.get(name, {}).get(key)
        if component is not None:
            refused = world.snapshots[(name, key)].values
            copy_fields(before.copy, component)
            world.snapshots[(name, key)] = Committed(refused, before.copy)


def _checked_edit(world, scene_path, name: str, key: str, component, before: Committed):
    """A validated copy of an edited live component; if the edit is invalid, the component
    gets its last valid values back and a SceneError says why."""
    from emberfx.scene import validated_copy

    try:
        valid = validated_copy(component, key, entity=name, path=scene_path)
    except SceneError as exc:
        copy_fields(before.copy, component)
        raise relabelled(exc, "live edit", UNDONE) from None
    references = getattr(type(component), "REFERENCES", {})
    if any(getattr(valid, f) != getattr(before.copy, f) for f in references):
        try:
            check_references(world.components, scene_path, name, {key: valid}, "live edit",
                             UNDONE)
        except SceneError:
            copy_fields(before.copy, component)
            raise
    return valid


def check_references(live: dict[str, dict], scene_path, name: str, components: dict,
                     label: str, note: str = "") -> None:
    """The entity names that ``components`` refer to (an emitter's ``affected_by``) must be
    entities of ``live`` (name -> its live components) with a wanted component, as in a scene
    file. Only the named entities are looked at, so a spawn costs the same at any size."""
    from emberfx.scene import EntitySpec
    from emberfx.scene import check_references as check

    targets = {t for c in components.values() for f in getattr(type(c), "REFERENCES", {})
               for t in (getattr(c, f) or ())}
    if not targets:
        return
    # every name only when one is missing, for the message's "did you mean"
    known = live if not targets <= live.keys() else {t: live[t] for t in targets}
    spec = EntitySpec(name, {**live.get(name, {}), **components})
    among = [spec if n == name else EntitySpec(n, c) for n, c in known.items()]
    if name not in known:
        among.append(spec)
    try:
        check([spec], among, scene_path)
    except SceneError as exc:
        raise relabelled(exc, label, note) from None
