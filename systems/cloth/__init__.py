"""The cloth family: explicit mass-spring patches (component and system).

Importing the package registers the family (components, system, actions, tools)."""

from emberfx.systems.cloth import component, system  # noqa: F401
