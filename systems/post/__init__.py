"""The post family: edge detect, bloom and tonemap on the HDR scene target (components and
system).

Importing the package registers the family (components, system, actions, tools)."""

from emberfx.systems.post import component, system  # noqa: F401
