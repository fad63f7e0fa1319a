"""The gas family: smoke and fire as an Eulerian gas on a grid (component and system).

Importing the package registers the family (component and system)."""

from emberfx.systems.gas import component, system  # noqa: F401
