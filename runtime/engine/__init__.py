"""The Engine and its parts: the esper world, reload transactions, the renderer,
telemetry, live edits and scripts."""


def __getattr__(name):
    # lazily, so importing a part (engine_guard, ...) does not start wgpu
    if name == "Engine":
        from emberfx.engine.engine import Engine
        return Engine
    raise AttributeError(f"module 'emberfx.engine' has no attribute {name!r}")
