"""The fractal family: Mandelbrot and Julia sets computed into a texture (component and system).

Importing the package registers the family (components, system, actions, tools)."""

from emberfx.systems.fractal import component, system  # noqa: F401
