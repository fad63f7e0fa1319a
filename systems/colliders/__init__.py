"""The colliders family: solids that cloth and particles do not enter (the component, its
packing for cloth and particles, and the draw of visible colliders).

Importing the package registers the family (components, system, actions, tools)."""

from emberfx.systems.colliders import component, system  # noqa: F401
