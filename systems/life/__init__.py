"""The Life family: Life-like cellular automata, bit-packed (component, rules, patterns, step
kernels, display passes, the system, the paint tool and the `emberfx life` command).

Importing the package registers the family (components, system, actions, tools)."""

from emberfx.systems.life import cli, component, display, kernels, patterns, rules, system, tools  # noqa: F401
