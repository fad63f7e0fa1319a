"""The label family: a line of text drawn as a world quad (component and system).

Importing the package registers the family (components, system, actions, tools)."""

from emberfx.systems.label import component, system  # noqa: F401
