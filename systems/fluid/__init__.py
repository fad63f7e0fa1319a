"""The fluid family: position-based fluids (Macklin and Mueller 2013) on the shared neighbour
grid (component and system).

Importing the package registers the family (component and system)."""

from emberfx.systems.fluid import component, system  # noqa: F401
