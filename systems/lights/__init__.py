"""The point-light family: ``[entity.point_light]`` lights (component and system) that light
meshes, cloth, colliders and lit particles through the renderer's tiled light lists
(runtime/core/point_lights.py).

Importing the package registers the family."""

from emberfx.systems.lights import component, system  # noqa: F401
