"""Live edits: ``engine.entity("jet").emitter.rate = 900.0`` from a script, the inspector, a hot
reload or a notebook. Components are tracked (components.py): setting a field, a field of a
nested object (``emitter.shape.radius``) or changing a list in place marks the component dirty
in the world (world.py). Before the next step or drawn frame the Engine calls ``sync``, which
looks at the dirty components only and treats each as its scene file's table would be treated:
validated (nested objects and the entity names it refers to included) and refused in the
loader's words. A refused edit is undone: the component gets its last valid values back, so a
rejected value can never become the state a later rollback returns to.

An accepted edit acts by the declared change class of the fields whose values differ
(components.py): live -> nothing more (the system writes its uniforms before each step),
passes -> the frame graph is rebuilt, rebuild -> the system rebuilds the entity and the readbacks
are laid out again.

The world keeps a ``Committed`` record per live component (``World.last_valid``): a copy of its
last valid values, made only when an edit is accepted.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable

from emberfx.core.errors import DeviceLimitError, EmberError, SceneError
from emberfx.engine.engine_guard import relabelled
from emberfx.model.components import Change, changed_between, field_names

UNDONE = "the edit is undone, the last valid values stay"


@dataclasses.dataclass(frozen=True, slots=True)
class Committed:
    """A live component's last valid values (``valid``: put back when an edit is refused) and
    the values its system runs with (``applied``: what an edit is compared with). They are one
    object except after ``undo``, until the next sync rebuilds what the restored values need."""
    valid: object
    applied: object


def committed(component) -> Committed:
    """The record of a component that is valid as it is (just validated or attached)."""
    values = copy.deepcopy(component)
    return Committed(values, values)


def copy_fields(source, target, among: list[str] | None = None) -> None:
    """Give ``target`` (a live component) the field values of ``source``, keeping its identity
    and that of its nested objects and lists (``emitter.shape``, ``emitter.bursts``): scripts
    and the inspector hold references to them. ``among``: the only fields that can differ,
    where the caller knows (the others hold the very same objects)."""
    for name in field_names(type(target)) if among is None else among:
        value, current = getattr(source, name), getattr(target, name)
        if value is current:
            continue
        if _fits_in_place(value, current):
            _copy_into(value, current)
        elif _atomic(value):
            # shared, even when equal: the next edit's check then sees this field unchanged
            # by identity alone (model/scene.py's validated_copy), not by comparing it
            setattr(target, name, value)
        elif type(current) is not type(value) or current != value:   # a numpy value differs
            setattr(target, name, copy.deepcopy(value))


_ATOMS = (int, float, str, bool, type(None))


def _atomic(value) -> bool:
    """A value that nothing can change in place: a number, a string, or a tuple of those."""
    if type(value) is tuple:
        return all(type(item) in _ATOMS for item in value)
    return type(value) in _ATOMS


def _fits_in_place(value, current) -> bool:
    if isinstance(current, list):
        return isinstance(value, list)
    return (type(current) is type(value) and dataclasses.is_dataclass(value)
            # typeshed's dataclass protocol does not declare __dataclass_params__
            and not type(value).__dataclass_params__.frozen)  # type: ignore[union-attr]


def _copy_into(value, current) -> None:
    """``current`` (a mutable dataclass or a list) takes ``value``'s contents in place."""
    if not isinstance(current, list):
        copy_fields(value, current)
        return
    for index, item in enumerate(value[:len(current)]):
        if _fits_in_place(item, current[index]):
            _copy_into(item, current[index])
        elif current[index] != item or type(current[index]) is not type(item):
            current[index] = copy.deepcopy(item)
    if len(current) > len(value):
        del current[len(value):]
    elif len(current) < len(value):
        current.extend(copy.deepcopy(value[len(current):]))


Edit = tuple[str, str, Committed]   # (entity, component key, its record before the edit)


def sync(world, scene_path, *, invalidate_graphs: Callable[[], None],
         lay_out_readback: Callable[[], None]) -> list[Edit]:
    """Apply the edits made in ``world`` (the Engine's entity store) since the last sync, in
    entity order. An edit that is invalid, or that the device refuses, is undone and raised
    (the edits not looked at yet stay pending). Returns the edits applied, for ``undo`` should
    the step that uses them fail."""
    if not world.dirty:
        return []
    pending = sorted(world.dirty.items(), key=lambda edit: world.entities[edit[0][0]].index)
    world.dirty = {}
    applied = []
    for position, ((name, key), fields) in enumerate(pending):
        try:
            edit = _apply(world, scene_path, name, key, fields, invalidate_graphs,
                          lay_out_readback)
        except BaseException:
            for later, later_fields in pending[position + 1:]:
                world.mark_dirty(later, later_fields)
            raise
        if edit is not None:
            applied.append(edit)
    return applied


def _apply(world, scene_path, name: str, key: str, fields: set[str] | None,
           invalidate_graphs: Callable[[], None],
           lay_out_readback: Callable[[], None]) -> Edit | None:
    component = world.live_component(name, key)
    if component is None:
        return None
    before: Committed = world.last_valid[(name, key)]
    valid, touched = _checked_edit(world, scene_path, name, key, component, before, fields)
    # checked field by field, the component and its valid copy hold the last valid values'
    # very objects outside ``touched``: only those fields can differ
    with world.quiet():
        copy_fields(valid, component, touched)   # the loader's types: tuples, no numpy values
    among = touched if before.applied is before.valid else None
    change = changed_between(type(component), before.applied, valid, among)
    world.last_valid[(name, key)] = Committed(valid, valid)
    if change is None:
        return None
    system = world.systems.get(key)
    if system is not None:
        try:
            system.edited(world.entities[name], component)
        except DeviceLimitError as exc:   # values the device cannot run (a loop past its limit)
            with world.quiet():
                copy_fields(before.valid, component)
            world.last_valid[(name, key)] = before
            system.edited(world.entities[name], component)
            raise DeviceLimitError(f"live edit: {exc}; {UNDONE}") from None
    if change >= Change.PASSES:
        invalidate_graphs()
    if system is not None and change is Change.REBUILD:
        try:
            system.rebuild(world.entities[name], component)
        except EmberError:
            with world.quiet():
                copy_fields(before.valid, component)
            world.last_valid[(name, key)] = Committed(before.valid, before.valid)
            system.add(world.entities[name], component)   # rebuild removed it
            raise
        finally:
            lay_out_readback()
    return (name, key, before)


def undo(world, applied: list[Edit]) -> None:
    """The step after these edits failed: the edited components get their last valid values
    back. Their systems still run with the refused ones, so the components stay dirty: the next
    sync rebuilds what the restored values need (e.g. the old capacity)."""
    for name, key, before in applied:
        component = world.live_component(name, key)
        if component is None:
            continue
        refused = world.last_valid[(name, key)].applied
        with world.quiet():
            copy_fields(before.valid, component)
        system = world.systems.get(key)
        if system is not None:
            system.edited(world.entities[name], component)
        world.last_valid[(name, key)] = Committed(before.valid, refused)
        world.mark_dirty((name, key), None)


def _checked_edit(world, scene_path, name: str, key: str, component, before: Committed,
                  fields: set[str] | None = None):
    """A validated copy of an edited live component, and when its fields were checked alone
    the only fields that can differ from the last valid values (model/scene.py's
    validated_copy's ``touched``; None: the whole component was checked);
    if the edit is invalid, the component gets its last valid values back and a SceneError
    says why. Only the fields whose values changed get the checks of a field alone (a script
    edits one or two fields every step); ``fields``: the only fields set since the last sync,
    where the tracking knows (every other one still holds its last valid value)."""
    from emberfx.model.scene import validated_copy

    touched: list[str] = []
    try:
        valid = validated_copy(component, key, entity=name, path=scene_path, since=before.valid,
                               touched=touched, assigned=fields)
    except SceneError as exc:
        with world.quiet():
            copy_fields(before.valid, component)
        raise relabelled(exc, "live edit", UNDONE) from None
    # what the component can check only with the scene's timestep (a cloth's stability)
    problem = (valid.timestep_problem(world.shared.fixed_dt)
               if valid is not before.valid and hasattr(valid, "timestep_problem") else None)
    if problem is not None:
        with world.quiet():
            copy_fields(before.valid, component)
        raise SceneError("live edit", f"{problem[1]}; {UNDONE}", entity=name,
                         field=f"{key}.{problem[0]}")
    from emberfx.model.component_values import reference_value

    references = getattr(type(component), "REFERENCES", {})
    if any(_field_root(valid, f) is not _field_root(before.valid, f)   # shared: unchanged
           and reference_value(valid, f) != reference_value(before.valid, f)
           for f in references):
        try:
            check_references(world, scene_path, name, {key: valid}, "live edit", UNDONE)
        except SceneError:
            with world.quiet():
                copy_fields(before.valid, component)
            raise
    return valid, touched or None


def _field_root(component, field: str):
    """The value of the component's own field that a dotted ``field`` starts from."""
    return getattr(component, field.partition(".")[0])


def check_references(world, scene_path, name: str, components: dict, label: str,
                     note: str = "") -> None:
    """The entity names that ``components`` refer to (an emitter's ``affected_by``) must be
    entities of ``world`` with a wanted component, as in a scene file. Only the named entities
    are looked at, so a spawn costs the same at any size."""
    from emberfx.model.component_values import reference_value, referenced_names
    from emberfx.model.scene import EntitySpec
    from emberfx.model.scene import check_references as check

    targets = {t for c in components.values() for f in getattr(type(c), "REFERENCES", {})
               for t in referenced_names(reference_value(c, f))}
    if not targets:
        return
    # every name only when one is missing, for the message's "did you mean"
    names = world.entities if not targets <= world.entities.keys() else targets
    known = {n: world.components_of(n) for n in names}
    current = world.components_of(name) if name in world.entities else {}
    spec = EntitySpec(name, {**current, **components})
    among = [spec if n == name else EntitySpec(n, c) for n, c in known.items()]
    if name not in known:
        among.append(spec)
    try:
        check([spec], among, scene_path)
    except SceneError as exc:
        raise relabelled(exc, label, note) from None
