"""The script watchdog: interrupts a script hook that runs longer than its time limit, and lets
the ``emberfx`` command end when a script left a thread running (``finish_process``).

One daemon thread watches every hook call of every Engine in the process. A hook call is made with
``call(limit)`` and bracketed by ``begin(call)`` and ``end(call)``; when a call is still running
past its deadline the watchdog raises ``ScriptTimeout`` in the thread that runs it, with
``PyThreadState_SetAsyncExc``. That reaches any thread (signals and ``_thread.interrupt_main()``
reach only the main thread), so Engines stepped from a notebook's worker thread or a thread pool
are covered too.

Races, and how they are closed:

- The hook may return just as its deadline passes. The watchdog fires only under the lock and only
  while the call is registered as running; ``end`` unregisters it under the same lock and, if the
  call had fired, cancels a still-undelivered exception (``PyThreadState_SetAsyncExc(tid, NULL)``).
  An exception that lands between the hook's return and ``end`` (or inside ``begin``) surfaces
  in the caller's ``except ScriptTimeout``, which calls ``end`` again (it is idempotent) and
  checks ``call.fired``.
- The exception may land inside this module's own code in the hook's thread: see ``Watchdog``
  for why that never leaves the lock held or a call registered.
- Hooks nest (``ctx.emit`` calls other scripts' ``on_event``). Only the innermost call of a thread
  is on the clock (see ``Watchdog``). An outer call's exception set just before a nested call
  began lands inside that one; its handler sees that its own call did not fire and re-raises,
  so the timeout is charged to the hook that overran.
- A hook may swallow the exception (a bare ``except:``), even in a loop whose every turn lands
  the next one inside its ``try`` again. The exception's instance is freed when the handler that
  swallowed it ends, in the hook's thread; it then turns on a trace function for the hook's
  frames (``pursue``, as a debugger attaches to running code), and the next line the hook runs
  raises ``ScriptTimeout`` again (``_trace``). A trace function that raises is turned off; when
  the hook swallows that one too it is turned on again, so the hook cannot run a line after a
  handler without raising: the exception leaves the hook at the first line outside a ``try``,
  at the latest its loop's own. emberfx's own code stays untraced (its ``finally`` blocks run
  whole; shielded blocks are not interrupted at all), and the thread's previous trace function
  (a debugger's, coverage's) is put back when the call ends. The watchdog also fires again
  every ``REFIRE_SECONDS`` while the call stays registered (a handler that loops without
  catching anything is stopped then).
- Engine code that a hook calls (``ctx.spawn`` creating GPU buffers) runs ``shielded()``: the
  watchdog waits, and a deadline that passed meanwhile raises when the engine call returns, so a
  timeout never leaves the engine half-way through a change.

Limit: the exception is delivered when the thread next runs Python bytecode. A hook blocked inside
one long C call (``time.sleep(60)``, a blocking read) is interrupted only when that call returns.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType

REFIRE_SECONDS = 1.0   # a hook that swallowed its ScriptTimeout gets another one this often


class ScriptTimeout(BaseException):
    """Raised inside a script hook that ran past its time limit. A ``BaseException`` so that a
    script's ``except Exception`` cannot swallow it, and not a ``KeyboardInterrupt`` so that it
    is never taken for Ctrl-C. Freed in the hook's own code while the hook is still overdue, it
    was swallowed: it then turns on the trace that stops the hook (``Watchdog.pursue``)."""

    def __del__(self):
        watchdog.pursue(sys._getframe(1))   # the frame whose handler ended and freed it


def _raise_in_thread(thread_id: int, exception: type[BaseException] | None) -> None:
    """Set (or, with None, cancel) the exception a thread raises at its next bytecode."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exception) if exception else None)


def _engine_code(frame: FrameType) -> bool:
    """Whether a frame runs emberfx's own code (this module included): never traced, so that a
    timeout cannot cut its cleanup (a ``finally``) short."""
    return str(frame.f_globals.get("__name__", "")).startswith("emberfx.")


class HookCall:
    """One hook call: its thread, its deadline, whether the watchdog fired on it, and how deep
    it is inside engine code (``shielded``). Made by the caller before ``begin`` so that the
    caller can always ``end`` it, whatever lands in between."""

    __slots__ = ("boundary", "caught", "deadline", "fired", "limit", "previous_trace", "shield",
                 "started", "thread", "traced")

    def __init__(self, limit: float):
        self.thread = threading.get_ident()
        self.limit = limit
        self.started = self.deadline = float("inf")   # set by begin()
        self.fired = False
        self.shield = 0
        self.boundary: FrameType | None = None   # the caller's frame: the hook's run above it
        self.traced = False         # the trace that stops the hook is on (pursue)
        self.previous_trace = None  # the thread's trace function before it
        self.caught = False         # the hook swallowed a ScriptTimeout and ran on


class Watchdog:
    """Each thread has a stack of running hook calls (hooks nest through ``ctx.emit``). Only the
    innermost one is on the clock: the time an outer hook spends waiting for a nested one is
    added to its deadline, so each hook is charged for its own time and a nested hook that
    never returns is the one stopped.

    An asynchronous exception (or Ctrl-C) may land in a hook's thread at any bytecode, also inside
    this class. So the hook side holds only a C-level lock (``with lock:`` cannot leave it held),
    wakes the watchdog through a C-level queue (one atomic ``put``), and keeps no state that an
    interrupted update could corrupt beyond the call that is being interrupted anyway."""

    def __init__(self):
        self._reset()

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._wake: queue.SimpleQueue[bool] = queue.SimpleQueue()   # a put wakes the watchdog
        self._stacks: dict[int, list[HookCall]] = {}  # thread id -> its calls, outermost first
        self._wake_at = float("inf")                  # when the watchdog thread next looks
        self._begun = 0                  # calls begun: the watchdog parks after a quiet period
        self._last_limit = float("inf")  # the limit of the latest call begun
        self._thread: threading.Thread | None = None

    @staticmethod
    def call(limit: float | None) -> HookCall | None:
        """A call to watch with ``begin`` (None: no limit, nothing to watch)."""
        if not limit or limit == float("inf"):
            return None
        return HookCall(limit)

    def begin(self, call: HookCall | None) -> None:
        """Start the clock of ``call``, a hook about to run in this thread."""
        if call is None:
            return
        call.boundary = sys._getframe(1)
        with self._lock:
            call.started = time.monotonic()
            call.deadline = call.started + call.limit
            self._stacks.setdefault(call.thread, []).append(call)
            self._begun += 1
            self._last_limit = call.limit
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._watch, daemon=True,
                                                name="emberfx-script-watchdog")
                self._thread.start()
            if call.deadline < self._wake_at:
                self._wake.put(True)

    def end(self, call: HookCall | None) -> None:
        """The hook call returned or raised: stop watching it and cancel an exception the
        watchdog set for it that was not delivered yet. Safe to call twice, or without begin."""
        if call is None:
            return
        with self._lock:
            stack = self._stacks.get(call.thread, [])
            if call not in stack:
                return
            index = stack.index(call)
            del stack[index]
            if not stack:
                del self._stacks[call.thread]
            elif index == len(stack):   # it was the innermost: the outer ones resume their clocks
                paused = time.monotonic() - call.started
                for outer in stack:
                    outer.deadline += paused
            if call.fired:
                _raise_in_thread(call.thread, None)
        if call.traced and call.thread == threading.get_ident():
            call.traced = False
            sys.settrace(call.previous_trace)
        call.boundary = None

    def _overdue(self) -> HookCall | None:
        """This thread's innermost hook call when it is past its deadline and not shielded."""
        stack = self._stacks.get(threading.get_ident())
        call = stack[-1] if stack else None
        return call if call is not None and call.fired and not call.shield else None

    def pursue(self, frame: FrameType | None) -> None:
        """A ScriptTimeout was freed in ``frame``: when that is the hook's own code and its call
        is still overdue, the hook swallowed it; trace the hook's frames so that the next line
        it runs raises again (``_trace``). Nothing happens in any other thread, in emberfx's own
        code, or once the call has ended."""
        call = self._overdue()
        if call is None or call.boundary is None or frame is None or _engine_code(frame):
            return
        hook_frames = []
        while frame is not None and frame is not call.boundary:
            if not _engine_code(frame):
                hook_frames.append(frame)
            frame = frame.f_back
        if frame is None or not hook_frames:
            return   # not inside this call's hook
        call.caught = True
        if not call.traced:
            call.previous_trace = sys.gettrace()   # type: ignore[assignment]
            call.traced = True
        sys.settrace(self._trace)   # again after a trace error turned it off
        for hook_frame in hook_frames:
            hook_frame.f_trace = self._trace

    def _trace(self, frame: FrameType, event: str, arg):
        """The trace function of an overdue hook's thread: a line of the hook's code (a frame
        it runs, or one called from those) raises ScriptTimeout; other frames are left alone.
        Returns itself for a frame to trace."""
        call = self._overdue()
        if call is None or _engine_code(frame):
            return None
        if event == "call":   # a new frame: traced when the hook's code called it, not engine code
            caller = frame.f_back
            while caller is not None and caller is not call.boundary and not _engine_code(caller):
                if caller.f_trace is not None:
                    return self._trace
                caller = caller.f_back
            return None
        raise ScriptTimeout   # at this line of the hook (and the trace is turned off)

    @contextlib.contextmanager
    def shielded(self) -> Iterator[None]:
        """Engine code called from a hook: not interrupted half-way; a deadline that passed
        meanwhile raises ``ScriptTimeout`` when the block ends."""
        with self._lock:
            stack = self._stacks.get(threading.get_ident())
            call = stack[-1] if stack else None
            if call is not None:
                call.shield += 1
        if call is None:
            yield
            return
        try:
            yield
        except BaseException:
            self._unshield(call, may_raise=False)
            raise
        if self._unshield(call, may_raise=True):
            raise ScriptTimeout

    def _unshield(self, call: HookCall, may_raise: bool) -> bool:
        """Leave a shielded block; True when the caller must raise ScriptTimeout (the call is
        then marked as fired, so its handler takes it as its own)."""
        with self._lock:
            call.shield -= 1
            if call.shield:
                return False
            if call.deadline < self._wake_at:
                self._wake.put(True)   # the watchdog skipped it while it was shielded
            now = time.monotonic()
            if not may_raise or call.fired or call.deadline > now:
                return False
            call.fired = True
            call.deadline = now + REFIRE_SECONDS   # in case the hook swallows this one
            return True

    def _watch(self) -> None:
        """Sleeps until the earliest deadline of the calls running. With none running it still
        looks again one limit later while calls keep beginning: a hook begun meanwhile has a
        later deadline, so it needs no wake-up (short hooks, several a frame, would otherwise
        each wake this thread); after a quiet limit it sleeps until the next call begins."""
        begun = -1
        while True:
            with self._lock:
                now = time.monotonic()
                watched = [stack[-1] for stack in self._stacks.values() if not stack[-1].shield]
                for call in watched:
                    if call.deadline <= now:
                        call.fired = True
                        call.deadline = now + REFIRE_SECONDS
                        _raise_in_thread(call.thread, ScriptTimeout)
                idle = float("inf") if self._begun == begun else now + self._last_limit
                begun = self._begun
                self._wake_at = min((c.deadline for c in watched), default=idle)
                wait = None if self._wake_at == float("inf") else self._wake_at - now
            with contextlib.suppress(queue.Empty):
                self._wake.get(timeout=wait)


watchdog = Watchdog()
# A forked child (a sweep worker) has no watchdog thread and may inherit a held lock.
os.register_at_fork(after_in_child=watchdog._reset)


def threads_left() -> list[threading.Thread]:
    """Threads that would keep the process alive after the main thread ends: alive, not daemon
    threads. emberfx starts only daemon threads; a script may start others."""
    main = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main and not t.daemon and t.is_alive()]


def finish_process(code: int) -> int:
    """The end of the ``emberfx`` command, its outputs written: returns ``code`` when nothing
    would keep the process alive; otherwise says in one line which threads (started by a
    script) are still running, flushes stdout and stderr, and ends the process now with
    ``code`` (``os._exit``) instead of waiting for them forever, as Python's exit would."""
    left = threads_left()
    if not left:
        return code
    names = ", ".join(f"'{t.name}'" for t in left[:5]) + (" ..." if len(left) > 5 else "")
    print(f"emberfx: note: {len(left)} thread{'s' if len(left) != 1 else ''} that a script "
          f"started still run{'s' if len(left) == 1 else ''} ({names}); exiting without waiting "
          f"for {'it' if len(left) == 1 else 'them'}", file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
