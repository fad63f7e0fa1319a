"""The trail family: ribbons behind an emitter's particles, built on the emitter's published
resources (component and system).

Importing the package registers the family (components, system, actions, tools)."""

from emberfx.systems.trails import component, system  # noqa: F401
