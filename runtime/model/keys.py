"""Key names: one spelling for the window, scripts and the scene's ``[bindings]`` table (the scene
loader checks bindings with ``check_binding``; the window names keys with ``key_name``).

rendercanvas reports a key as the character it types (``"a"``, ``" "``, ``"."``) or as a DOM-style
name (``"Escape"``, ``"F1"``, ``"ArrowUp"``). emberfx gives scripts and bindings the lower-case form
of those names, with the space bar spelled ``"space"``: ``on_key(ctx, "space")``,
``[bindings] f2 = "toggle_wind"``. Glfw reports a shifted digit as the digit (shift+"=" is "="), so
a binding names the key, not the character it would type.

The frame loop owns a few keys (``RESERVED``); a binding may not take them, so that Space always
pauses and Escape always quits whatever a scene says.
"""

from __future__ import annotations

import difflib
import string

NAMED = ("space", "escape", "enter", "tab", "backspace", "delete", "insert", "home", "end",
         "pageup", "pagedown", "arrowup", "arrowdown", "arrowleft", "arrowright",
         *(f"f{i}" for i in range(1, 13)))
CHARACTERS = tuple(string.ascii_lowercase + string.digits + "`-=[]\\;',./")
KEY_NAMES = frozenset(NAMED + CHARACTERS)

# What the frame loop does with its own keys (shown by the inspector and in error messages).
RESERVED = {
    "space": "pause / resume",
    ".": "single step while paused",
    "=": "faster simulation (+)",
    "-": "slower simulation",
    "r": "reload the scene",
    "s": "save a screenshot",
    "f1": "toggle the inspector",
    "escape": "quit",
}


def key_name(raw: str | None) -> str | None:
    """The emberfx name of a key from a rendercanvas event, or None for keys we don't name
    (modifiers alone, media keys)."""
    if not raw:
        return None
    if raw == " ":
        return "space"
    if raw == "+":   # the numpad plus, and a keyboard that reports it unshifted
        return "="
    if raw == "_":
        return "-"
    name = raw.lower()
    return name if name in KEY_NAMES else None


def check_binding(key: str) -> str | None:
    """None when ``key`` may be bound; otherwise what is wrong with it, as a phrase."""
    name = key.lower()
    if name in RESERVED:
        return f"key '{key}' is reserved by the frame loop ({RESERVED[name]})"
    if name not in KEY_NAMES:
        close = difflib.get_close_matches(name, sorted(KEY_NAMES), n=1, cutoff=0.6)
        hint = f"did you mean '{close[0]}'?" if close else (
            "expected a letter, a digit, punctuation, 'space', 'enter', 'tab', an arrow "
            "('arrowup', ...) or 'f2'..'f12'")
        return f"unknown key name '{key}', {hint}"
    return None
