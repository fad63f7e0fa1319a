"""Ctrl-C at safe points.

Python's default SIGINT handler raises ``KeyboardInterrupt`` at whatever bytecode the main thread is
running, which may be a cffi callback of wgpu (``buffer_map_callback``): there the exception is
printed as "ignored" and lost, and the render goes on as if nothing happened. Inside ``deferred()``
a Ctrl-C is only recorded; the frame loop calls ``check()`` between steps and frames, where raising
is safe. A second Ctrl-C before the next check raises at once, so a stuck loop can still be left.
A Ctrl-C raised at once stays recorded until an exception leaves ``deferred()``: code that swallows
it (a cffi callback, a script's bare ``except``) cannot make the loop go on.

User code (script hooks) runs inside ``immediate()``: there a Ctrl-C raises at once, as Python's
default does, because a hook in an endless loop would never reach a check. A script timeout is a
different exception (``ScriptTimeout`` in scripting), never a ``KeyboardInterrupt``.

Signals reach only the main thread. Engines driven from other threads (a notebook's worker, a
sweep's pool) are not interrupted here; they see ``check()`` as a no-op.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator


class _State:
    installed = 0          # nesting depth of deferred() on the main thread
    pending = False        # a Ctrl-C arrived and was not raised yet
    immediate = 0          # nesting depth of immediate(): raise at once
    notice: str | None = None   # what the first Ctrl-C inside deferred() prints, if anything


_state = _State()


def _on_sigint(signum, frame) -> None:
    if _state.immediate or _state.pending:
        # Stays pending: if this raise lands in a cffi callback, cffi prints and drops it, and
        # the next check() must still stop the loop. deferred() clears it once it propagates.
        _state.pending = True
        raise KeyboardInterrupt
    _state.pending = True
    if _state.installed and _state.notice:
        _say(_state.notice)


def _say(message: str) -> None:
    # os.write, not print: a signal handler may run while the main thread is inside a print
    # to stderr, and re-entering a buffered stream raises RuntimeError.
    try:
        os.write(2, f"emberfx: {message}\n".encode())
    except OSError:
        pass


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def deferred(notice: str | None = None) -> Iterator[None]:
    """Within, Ctrl-C raises ``KeyboardInterrupt`` only at ``check()`` (or at a second Ctrl-C).
    On the way out a Ctrl-C still pending is raised, so it is never lost; when an exception
    already leaves the block (that Ctrl-C's own, often) it is not raised a second time.

    ``notice`` is printed to stderr at the first Ctrl-C, so a long step is not mistaken for a
    hang. Where SIGINT is ignored (a background job of a non-interactive shell) it stays
    ignored."""
    if not _main_thread() or _state.installed:
        _state.installed += _main_thread()
        try:
            yield
        finally:
            _state.installed -= _main_thread()
        return
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        yield
        return
    previous = signal.signal(signal.SIGINT, _on_sigint)
    _state.installed, _state.notice = 1, notice
    leaving_with_error = True
    try:
        yield
        leaving_with_error = False
    finally:
        _state.installed, _state.notice = 0, None
        signal.signal(signal.SIGINT, previous)
        if leaving_with_error:
            _state.pending = False
    check()


def check() -> None:
    """Raise the Ctrl-C that arrived since the last check (a no-op off the main thread)."""
    if _state.pending and _main_thread():
        _state.pending = False
        raise KeyboardInterrupt


@contextlib.contextmanager
def immediate() -> Iterator[None]:
    """Run user code where Ctrl-C must interrupt at once (a pending one raises on entry)."""
    if not _main_thread():
        yield
        return
    check()
    _state.immediate += 1
    try:
        yield
    finally:
        _state.immediate -= 1
