"""What a script's hooks must be: the names the frame loop calls, what each is called with,
and why a module-level name cannot be its hook (runtime/engine/scripting.py loads scripts and
reports these in one line)."""

from __future__ import annotations

import inspect

from emberfx.model.scene_fields import show

HOOKS = {"on_start": 1, "on_update": 2, "on_key": 2, "on_event": 3}
"""hook name -> how many arguments it is called with"""


def hook_parameters(name: str) -> str:
    """What hook ``name`` is called with, as its ``def`` line would list them."""
    return ", ".join(["ctx", "dt"] if name == "on_update" else
                     ["ctx", "key"] if name == "on_key" else
                     ["ctx", "name", "data"] if name == "on_event" else ["ctx"])


def hook_problem(name: str, fn) -> str | None:
    """Why ``fn``, a script's module-level ``name``, cannot be that hook, as "name: expected
    ..., found ..."; None when it can. A coroutine or generator function is refused: calling it
    only makes an object, so its body would never run."""
    params = hook_parameters(name)
    if not callable(fn):
        return (f"{name}: expected a function {name}({params}), found "
                f"{show(fn, 40)} ({type(fn).__name__})")
    for test, what in ((inspect.iscoroutinefunction, "an async def"),
                       (inspect.isasyncgenfunction, "an async generator"),
                       (inspect.isgeneratorfunction, "a generator function (it yields)")):
        if test(fn):
            return (f"{name}: expected a plain def {name}({params}), found {what}: hooks are "
                    f"called and never awaited or iterated, so its body would never run")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):   # a builtin without a signature: called as it is
        return None
    try:
        signature.bind(*([None] * HOOKS[name]))
    except TypeError:
        return f"{name} must take ({params}); found {name}{signature}"
    return None
