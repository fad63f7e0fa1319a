"""The forces family: attractors, force fields and kill zones, packed for the emitter
and cloth (components, packing, the follow-the-mouse pointer tool).

Importing the package registers the family (components, system, actions, tools)."""

from emberfx.systems.forces import fields, forces, tools  # noqa: F401  (components first)
