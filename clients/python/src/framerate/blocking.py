"""The blocking client, for scripts: the asyncio client run on a private event-loop thread.

::

    with framerate.blocking.connect() as conn:
        link = conn.register(80, 120, 120, high_frame_rate=True)
        for tick in link:                       # or link.next_tick(timeout=1.0)
            print(tick.sequence, tick.target_timestamp - time.monotonic())

Everything behaves as in :mod:`framerate.aio` (errors, reconnect, skipped
gaps); timestamps are ``CLOCK_MONOTONIC`` seconds, the clock of
:func:`time.monotonic`. A connection and its links may be used from any one
thread at a time.

For a ``select``/``poll`` loop, :meth:`Connection.fileno` is a descriptor that
is readable while a link or watch of the connection has a tick, an event or
its end waiting; :meth:`DisplayLink.poll_tick` and :meth:`Watch.poll_event`
take them without blocking. Unlike the socket, it stays the same across
reconnects. An end waits only when the application did not cause it (the daemon
closed the link, or the connection gave up reconnecting): after
:meth:`DisplayLink.invalidate`, :meth:`Watch.unwatch` or leaving ``with``, the
link or watch makes the descriptor readable no more, and a ``poll_tick`` on it
raises :class:`~framerate.LinkEnded` (or the error it ended with), after any ticks
queued before, as documented::

    while True:
        select.select([conn], [], [])
        while (waiting := link.poll_tick()) is not None:
            render(waiting)
"""

from __future__ import annotations

import asyncio
import os
import threading
from types import TracebackType
from typing import Any, Awaitable, Callable, Dict, Iterator, List, Optional, Tuple, Type, TypeVar, Union

from . import aio
from .errors import ConnectionClosed, FrameRateError, LinkEnded
from .reconnect import ReconnectPolicy
from .state import CompositorState
from .types import Event, LinkStatus, Presented, Tick

__all__ = ["connect", "Connection", "DisplayLink", "Watch"]

T = TypeVar("T")


class _LoopThread:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.stopped = False
        self.thread = threading.Thread(target=self._run, name="framerate-client", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, awaitable: Awaitable[T], timeout: Optional[float] = None) -> T:
        if self.stopped:
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise ConnectionClosed("the connection was closed")

        async def runner() -> T:
            return await awaitable

        return asyncio.run_coroutine_threadsafe(runner(), self.loop).result(timeout)

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        if not self.thread.is_alive():
            self.loop.close()


def connect(
    path: Optional[str] = None,
    *,
    reconnect: Union[bool, ReconnectPolicy] = True,
    reconnect_timeout: Optional[float] = 30.0,
    tick_buffer: int = aio.DEFAULT_TICK_BUFFER,
    request_timeout: Optional[float] = aio.DEFAULT_REQUEST_TIMEOUT,
) -> "Connection":
    """Connects to framerated; the arguments and errors are those of :func:`framerate.aio.connect`.
    ``path=None`` finds the socket the way framectl does."""
    runner = _LoopThread()
    try:
        conn = runner.run(aio.Connection.open(
            path, reconnect=reconnect, reconnect_timeout=reconnect_timeout, tick_buffer=tick_buffer,
            request_timeout=request_timeout,
        ))
    except BaseException:
        runner.stop()
        raise
    return Connection(runner, conn)


class _Readiness:
    """A pipe whose read end is readable while the connection has something for the
    application. Only the loop thread touches ``signalled`` and the pipe's contents,
    so a push and a drain cannot race."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self.write_fd, False)
        self.signalled = False

    def signal(self) -> None:
        if not self.signalled:
            self.signalled = True
            os.write(self.write_fd, b"\0")

    def rearm(self, pending: Callable[[], bool]) -> None:
        """Empties the pipe unless ``pending()`` still holds."""
        if self.signalled and not pending():
            try:
                while os.read(self.read_fd, 64):
                    pass
            except BlockingIOError:
                pass
            self.signalled = False

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            try:
                os.close(fd)
            except OSError:
                pass


class Connection:
    """A blocking connection; see :class:`framerate.aio.Connection`."""

    def __init__(self, runner: _LoopThread, conn: aio.Connection) -> None:
        self._runner = runner
        self._conn = conn
        self._readiness = _Readiness()

        def install() -> None:
            conn._ready_hook = self._readiness.signal
            if conn._has_ready():
                self._readiness.signal()

        runner.loop.call_soon_threadsafe(install)

    def fileno(self) -> int:
        """A descriptor for ``select``/``poll``: readable while a link or watch of this
        connection has a tick, an event or its end waiting (take them with
        :meth:`DisplayLink.poll_tick`, :meth:`Watch.poll_event` or the blocking calls).
        Only an end the application did not cause waits: one it caused
        (:meth:`DisplayLink.invalidate`, :meth:`Watch.unwatch`, leaving ``with``) does
        not. It is not the socket, and it stays the same across reconnects."""
        return self._readiness.read_fd

    def _take(self, take: Callable[[], T]) -> T:
        """Runs ``take`` on the loop thread, then clears :meth:`fileno` if nothing is left."""
        async def run() -> T:
            try:
                return take()
            finally:
                self._readiness.rearm(self._conn._has_ready)

        return self._runner.run(run())

    async def _rearm_after(self, awaitable: Awaitable[T]) -> T:
        try:
            return await awaitable
        finally:
            self._readiness.rearm(self._conn._has_ready)

    @property
    def path(self) -> str:
        return self._conn.path

    @property
    def connected(self) -> bool:
        return self._conn.connected

    @property
    def reconnects(self) -> int:
        return self._conn.reconnects

    @property
    def policy(self) -> ReconnectPolicy:
        """The backoff and attempt limit used when the connection drops."""
        return self._conn.policy

    @property
    def async_connection(self) -> aio.Connection:
        """The underlying asyncio connection (it lives on this object's private loop)."""
        return self._conn

    def register(
        self,
        minimum: float,
        maximum: float,
        preferred: float = 0,
        label: Optional[str] = None,
        high_frame_rate: bool = False,
        paused: bool = False,
        display: Optional[int] = None,
        adaptive: bool = False,
        timelines: int = 1,
        preferred_frame_latency: int = 1,
    ) -> "DisplayLink":
        """Registers a display link; see :meth:`framerate.aio.Connection.register`."""
        link = self._runner.run(self._conn.register(minimum, maximum, preferred, label=label,
                                                    high_frame_rate=high_frame_rate, paused=paused, display=display,
                                                    adaptive=adaptive, timelines=timelines,
                                                    preferred_frame_latency=preferred_frame_latency))
        return DisplayLink(self, link)

    def state(self) -> CompositorState:
        """``Compositor/GetState``; see :meth:`framerate.aio.Connection.state`."""
        return self._runner.run(self._conn.state())

    def set_caps(
        self,
        display: Optional[int] = None,
        low_power_mode: Optional[bool] = None,
        limit_frame_rate: Optional[bool] = None,
        thermal_state: Optional[str] = None,
    ) -> List[Dict[str, Any]]:
        return self._runner.run(self._conn.set_caps(display, low_power_mode, limit_frame_rate, thermal_state))

    def watch(self, event_buffer: int = aio.DEFAULT_EVENT_BUFFER) -> "Watch":
        """Starts a watch now; iterate it for :class:`~framerate.Event` objects."""
        async def start() -> aio.Watch:
            watch = self._conn.watch(event_buffer)  # made on the loop thread (its asyncio.Event binds there)
            await watch.start()
            return watch

        return Watch(self, self._runner.run(start()))

    def health(self, service: Optional[str] = None) -> str:
        return self._runner.run(self._conn.health(service))

    def list_services(self) -> List[Dict[str, Any]]:
        return self._runner.run(self._conn.list_services())

    def call(self, method: str, params: Any = None) -> Any:
        return self._runner.run(self._conn.call(method, params))

    def notify(self, method: str, params: Any = None) -> None:
        self._runner.run(self._conn.notify(method, params))

    def close(self) -> None:
        """Closes the connection and stops its loop thread."""
        if self._runner.stopped:
            return
        try:
            self._runner.run(self._conn.close(), timeout=10)
        finally:
            self._runner.stop()
            self._readiness.close()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DisplayLink:
    """A blocking display link; see :class:`framerate.aio.DisplayLink`.

    ``for tick in link`` yields ticks until the link ends (and raises the
    error when the daemon ended it); :meth:`next_tick` takes a timeout;
    ``with conn.register(...) as link:`` invalidates it on the way out.
    """

    def __init__(self, conn: Connection, link: aio.DisplayLink) -> None:
        self._owner = conn
        self._runner = conn._runner
        self._link = link

    @property
    def id(self) -> int:
        """The link's id, kept across reconnects (ticks carry it)."""
        return self._link.id

    @property
    def daemon_id(self) -> Optional[int]:
        """The daemon's id for the link now (``None`` while reconnecting)."""
        return self._link.daemon_id

    @property
    def status(self) -> Optional[LinkStatus]:
        return self._link.status

    @property
    def range(self) -> Tuple[float, float, float]:
        return self._link.range

    @property
    def paused(self) -> bool:
        return self._link.paused

    @property
    def display(self) -> Optional[int]:
        return self._link.display

    @property
    def ended(self) -> bool:
        return self._link.ended

    @property
    def error(self) -> Optional[FrameRateError]:
        return self._link.error

    def update(self, minimum: Optional[float] = None, maximum: Optional[float] = None, preferred: float = 0,
               *, paused: Optional[bool] = None, adaptive: Optional[bool] = None, timelines: Optional[int] = None,
               preferred_frame_latency: Optional[int] = None) -> LinkStatus:
        return self._runner.run(self._link.update(minimum, maximum, preferred, paused=paused, adaptive=adaptive,
                                                  timelines=timelines, preferred_frame_latency=preferred_frame_latency))

    @property
    def adaptive(self) -> bool:
        return self._link.adaptive

    @property
    def boosted_until(self) -> Optional[float]:
        """When the latest :meth:`boost` ends, seconds on ``CLOCK_MONOTONIC``."""
        return self._link.boosted_until

    def boost(self, duration: float, minimum: Optional[float] = None, maximum: Optional[float] = None,
              preferred: float = 0) -> LinkStatus:
        """``DisplayLink/Boost``; see :meth:`framerate.aio.DisplayLink.boost`."""
        return self._runner.run(self._link.boost(duration, minimum, maximum, preferred))

    def pause(self) -> LinkStatus:
        return self._runner.run(self._link.pause())

    def resume(self) -> LinkStatus:
        return self._runner.run(self._link.resume())

    def invalidate(self) -> None:
        """``DisplayLink/Invalidate`` (see :meth:`framerate.aio.DisplayLink.invalidate`). The
        end is the application's own: it leaves :meth:`Connection.fileno` unreadable (unless
        another link or watch has something waiting)."""
        self._runner.run(self._owner._rearm_after(self._link.invalidate()))

    def frame_done(self, sequence: int, content_velocity: Optional[float] = None) -> None:
        """Sends ``FrameDone`` for ``sequence`` as a notification, with ``content_velocity``
        (points/s) if given (see :meth:`framerate.aio.DisplayLink.frame_done`)."""
        self._runner.run(self._link.frame_done(sequence, content_velocity))

    def present(self, sequence: int, at: Optional[float] = None, after_minimum_duration: Optional[float] = None,
                vsync_id: Optional[int] = None, content_velocity: Optional[float] = None) -> None:
        """Sends ``Present`` for ``sequence`` as a notification (see :meth:`framerate.aio.DisplayLink.present`)."""
        self._runner.run(self._link.present(sequence, at, after_minimum_duration, vsync_id=vsync_id,
                                            content_velocity=content_velocity))

    def presented(self) -> List[Presented]:
        """The ``Presented`` reports received since the last call, oldest first."""
        return self._link.presented()

    def next_tick(self, timeout: Optional[float] = None) -> Tick:
        """The next tick, waiting through a reconnect.

        Raises:
            TimeoutError: no tick within ``timeout`` seconds (``None``: no limit).
            LinkEnded: the link ended cleanly (invalidated, or the connection closed).
            FrameRateError: the error the link ended with.
        """
        return self._runner.run(self._owner._rearm_after(self._link.next_tick(timeout)))

    def poll_tick(self) -> Optional[Tick]:
        """The next tick if one is waiting, else ``None``, without blocking; raises as
        :meth:`next_tick` once the link ended. Use it when :meth:`Connection.fileno` is readable."""
        return self._owner._take(self._link.poll_tick)

    def __iter__(self) -> Iterator[Tick]:
        while True:
            try:
                yield self.next_tick()
            except LinkEnded:
                return

    def __enter__(self) -> "DisplayLink":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        if not self._runner.stopped:
            self._runner.run(self._owner._rearm_after(self._link.__aexit__(exc_type, exc, traceback)))

    def __repr__(self) -> str:
        return repr(self._link)


class Watch:
    """A blocking compositor watch; see :class:`framerate.aio.Watch`."""

    def __init__(self, conn: Connection, watch: aio.Watch) -> None:
        self._owner = conn
        self._runner = conn._runner
        self._watch = watch

    @property
    def state(self) -> Optional[CompositorState]:
        """The GetState result taken with the (latest) subscription."""
        return self._watch.state

    @property
    def id(self) -> Optional[int]:
        return self._watch.id

    def next_event(self, timeout: Optional[float] = None) -> Optional[Event]:
        """The next event; ``None`` once the watch ended; :class:`TimeoutError` after ``timeout`` s."""
        return self._runner.run(self._owner._rearm_after(self._watch.next_event(timeout)))

    def poll_event(self) -> Optional[Event]:
        """The next event if one is waiting, else ``None`` (also once the watch ended), without blocking."""
        return self._owner._take(self._watch.poll_event)

    def unwatch(self) -> None:
        """``Compositor/Unwatch``; like :meth:`DisplayLink.invalidate`, it leaves
        :meth:`Connection.fileno` unreadable (unless something else waits)."""
        self._runner.run(self._owner._rearm_after(self._watch.unwatch()))

    def __iter__(self) -> Iterator[Event]:
        while True:
            event = self.next_event()
            if event is None:
                return
            yield event

    def __enter__(self) -> "Watch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.unwatch()
