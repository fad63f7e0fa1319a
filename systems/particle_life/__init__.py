"""The particle-life family: species, an attraction matrix and a uniform grid (component and
system).

Importing the package registers the family (components, system, actions, tools)."""

from emberfx.systems.particle_life import component, system  # noqa: F401
