"""The emitter family: a fixed-capacity particle pool (component, host-side parameter packing,
the system, its prewarm, and the ctx.burst script action).

Importing the package registers the family (components, system, actions, tools)."""

from emberfx.systems.emitter import actions, component, params, prewarm, system  # noqa: F401
