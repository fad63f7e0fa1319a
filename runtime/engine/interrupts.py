"""Ctrl-C and SIGTERM at safe points.

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

A CLI command runs inside ``command()`` from its first line (argument parsing loads the families,
then the adapter, the engine and the encoder start): there Ctrl-C raises at once outside
``deferred()`` blocks and stays recorded, as above, and SIGTERM does the same with ``Terminated``,
so both unwind through the writers' cleanup (every temp file removed, ffmpeg stopped). One that
arrives inside a wgpu callback (adapter and device requests, buffer maps) is only recorded, and
raised at the next check or when the command ends.
``run_command`` turns them into exit statuses 130 and 143 with one line on stderr. SIGKILL
cannot be handled: its temp files stay until the next write into that folder removes them
(app/output.py).

Signals reach only the main thread. Engines driven from other threads (a notebook's worker, a
sweep's pool) are not interrupted here; they see ``check()`` as a no-op.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

EXIT_INTERRUPTED = 130   # 128 + SIGINT, as shells report a Ctrl-C
EXIT_TERMINATED = 143    # 128 + SIGTERM
CALLBACK_FRAMES = 8      # how far up the stack a signal looks for a wgpu callback


class Terminated(BaseException):
    """SIGTERM inside ``command()``: raised, like Ctrl-C's KeyboardInterrupt, where stopping is
    safe. A BaseException, so only cleanup code (``except BaseException``, ``finally``) sees it."""


class _State:
    command = False        # command() installed the handlers for the whole process
    installed = 0          # nesting depth of deferred() on the main thread
    pending: type[BaseException] | None = None   # a signal's exception, not raised yet
    immediate = 0          # nesting depth of immediate(): raise at once
    notice: str | None = None   # what the first Ctrl-C inside deferred() prints, if anything
    stopping = False       # run_command is reporting a stop: later signals change nothing


_state = _State()


def _in_native_callback(frame) -> bool:
    """Whether the main thread runs a wgpu callback (called by native code through cffi, which
    prints and drops an exception raised there), or code it called."""
    for _ in range(CALLBACK_FRAMES):
        if frame is None:
            return False
        if ("callback" in frame.f_code.co_name
                and str(frame.f_globals.get("__name__", "")).startswith("wgpu")):
            return True
        frame = frame.f_back
    return False


def _on_signal(signum, frame) -> None:
    if _state.stopping:
        return
    kind = Terminated if signum == signal.SIGTERM else KeyboardInterrupt
    if (_state.command and not _state.installed and not _state.immediate
            and _state.pending is None and _in_native_callback(frame)):
        _state.pending = kind   # raised at the next check(), at the latest when the command ends
        return
    if _state.immediate or _state.pending is not None or not _state.installed:
        # Stays pending: if this raise lands in a cffi callback, cffi prints and drops it, and
        # the next check() must still stop. deferred() and command() clear it once it leaves.
        _state.pending = _state.pending or kind
        raise kind
    _state.pending = kind
    if _state.notice:
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
    own = not _state.command   # inside command() its handlers are in place already
    if own and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        yield
        return
    previous = signal.signal(signal.SIGINT, _on_signal) if own else None
    _state.installed, _state.notice = 1, notice
    leaving_with_error = True
    try:
        yield
        leaving_with_error = False
    finally:
        _state.installed, _state.notice = 0, None
        if own:
            signal.signal(signal.SIGINT, previous)
        if leaving_with_error:
            _state.pending = None
    check()


def check() -> None:
    """Raise the Ctrl-C (or, in a command, SIGTERM) that arrived since the last check (a no-op
    off the main thread)."""
    if _state.pending is not None and _main_thread():
        kind, _state.pending = _state.pending, None
        raise kind


@contextlib.contextmanager
def command() -> Iterator[None]:
    """Handle SIGINT and SIGTERM for a whole command (see the module's doc); a signal that is
    ignored (SIG_IGN) stays ignored. Only on the main thread; not nested."""
    if not _main_thread() or _state.command:
        yield
        return
    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, _on_signal)
    hook = sys.unraisablehook

    def keep_signals(unraisable) -> None:
        # A signal raised where Python cannot propagate it (a weakref callback or a __del__ run
        # by the garbage collector) is printed as "Exception ignored in ..." and dropped: keep it
        # pending for the next check() instead, and print nothing.
        if isinstance(unraisable.exc_value, (KeyboardInterrupt, Terminated)):
            _state.pending = _state.pending or type(unraisable.exc_value)
            return
        hook(unraisable)

    sys.unraisablehook = keep_signals
    _state.command, _state.stopping, _state.pending = True, False, None
    try:
        yield
    finally:
        sys.unraisablehook = hook
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _state.command, _state.stopping, _state.pending = False, False, None


def run_command(body: Callable[[], int], prog: str) -> int:
    """``body()`` inside ``command()``: its status, or 130 after Ctrl-C and 143 after SIGTERM,
    each with one line on stderr and no traceback."""
    with command():
        try:
            status = body()
            check()   # a signal recorded where raising was unsafe, and never raised since
            return status
        except KeyboardInterrupt:
            _state.stopping = True
            status, word = EXIT_INTERRUPTED, "interrupted"
        except Terminated:
            _state.stopping = True
            status, word = EXIT_TERMINATED, "terminated"
        try:
            os.write(2, f"{prog}: {word}\n".encode())
        except OSError:
            pass
        return status


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
