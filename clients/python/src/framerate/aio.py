"""The asyncio client: :func:`connect`, :class:`Connection`, :class:`DisplayLink`, :class:`Watch`.

::

    async with await framerate.connect() as conn:
        link = await conn.register(80, 120, 120, high_frame_rate=True)
        async for tick in link:
            budget = tick.target_timestamp - time.monotonic()   # CLOCK_MONOTONIC
            ...                                                 # render
            await link.frame_done(tick.sequence)

Reconnect follows the rule of docs/protocol.md ("Reconnecting"), as the Swift
and C clients do: when the daemon goes away (it restarts, or its socket
closes), attempt ``n`` waits ``min(1 s, 10 ms * 2**n)`` ±10 % jitter
(:class:`~framerate.ReconnectPolicy`), for up to ``reconnect_timeout`` seconds
or the policy's ``maximum_attempts``, and registers every live link again with
its latest range, paused flag, label, display and entitlement. The
:class:`DisplayLink` objects, their ``id`` and their tick numbering stay the
same (only :attr:`DisplayLink.daemon_id` changes): the first tick after the
reconnect reports the outage as one gap, ``skipped = max(1, round((timestamp -
last.timestamp) * callback_rate) - 1)`` (0 for a link that was paused), and
sequences continue; ``async for`` and :meth:`DisplayLink.next_tick` wait
through the outage. Calls whose answer was pending when the connection dropped,
and calls made while it is down, fail at once with
:class:`~framerate.ConnectionLost`; a ``frame_done`` is dropped and an
``invalidate`` succeeds locally. Watches are restarted too, with a
``resynchronized`` event carrying the new state.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import functools
import json
import math
import numbers
import os
import random
import stat
from types import TracebackType
from typing import Any, Awaitable, Callable, Deque, Dict, Generator, List, Optional, Sequence, Set, Tuple, Type, Union

from . import _trust
from .errors import (
    ConnectionClosed,
    DeadlineExceeded,
    ConnectionLost,
    DaemonNotRunning,
    FrameRateError,
    InvalidArgument,
    LinkEnded,
    NotFound,
    PermissionDenied,
    ProtocolError,
    Unavailable,
    UntrustedDaemon,
    error_from_response,
    error_from_status,
)
from .reconnect import ReconnectPolicy
from .state import CompositorState
from .types import Event, LinkStatus, Presented, SocketChoice, Tick, find_socket

__all__ = ["connect", "Connection", "DisplayLink", "Watch"]

REGISTER = "framerate.v1.DisplayLink/Register"
TICK = "framerate.v1.DisplayLink/Tick"
UPDATE = "framerate.v1.DisplayLink/Update"
INVALIDATE = "framerate.v1.DisplayLink/Invalidate"
FRAME_DONE = "framerate.v1.DisplayLink/FrameDone"
PRESENT = "framerate.v1.DisplayLink/Present"
PRESENTED = "framerate.v1.DisplayLink/Presented"
BOOST = "framerate.v1.DisplayLink/Boost"
#: The longest boost, seconds (``DisplayLink/Boost`` takes ``0 < duration <= 5``).
MAX_BOOST_DURATION = 5.0
CLOSED = "framerate.v1.DisplayLink/Closed"
GET_STATE = "framerate.v1.Compositor/GetState"
SET_CAPS = "framerate.v1.Compositor/SetCaps"
WATCH = "framerate.v1.Compositor/Watch"
EVENT = "framerate.v1.Compositor/Event"
UNWATCH = "framerate.v1.Compositor/Unwatch"
HEALTH = "grpc.health.v1.Health/Check"
LIST_SERVICES = "framerate.v1.Reflection/ListServices"

#: Longest line accepted from the daemon: the protocol's limit (16 MiB; the C client's
#: FR_MAX_LINE). A GetState with thousands of links fits easily.
LINE_LIMIT = 16 * 1024 * 1024
#: Default number of undelivered ticks kept per link (the newest are kept).
DEFAULT_TICK_BUFFER = 8
#: Default number of undelivered events kept per watch.
DEFAULT_EVENT_BUFFER = 4096
#: Default seconds a call waits for its answer (the C client's default too).
DEFAULT_REQUEST_TIMEOUT = 5.0

#: How many deliveries (ticks, events, ends) a reconnect attempt holds before the
#: re-registrations are all answered (see ``Connection._deliver``); one more fails the
#: attempt. 64 links at 120 Hz for 5 s (the default request timeout) hold 38,400.
HELD_LIMIT = 65_536
#: Seconds (event-loop clock) :meth:`Connection.close` gives the daemon to read what
#: the client still has buffered before it discards the rest and closes the socket.
CLOSE_FLUSH_TIMEOUT = 1.0

_Hook = Optional[Callable[[Any], None]]


def _reject_constant(name: str) -> Any:
    """``json.loads`` takes ``NaN`` and ``Infinity``, which are not JSON (RFC 8259) and
    which the daemon never writes: a line with one is malformed."""
    raise ValueError(f"{name} is not a JSON number")


def _decoded(what: str, result: Any, decode: Callable[[Any], Any]) -> Any:
    """``decode(result)``, or :class:`ProtocolError` naming ``what`` when the daemon's
    result does not have the expected shape (never a bare ``KeyError`` or ``TypeError``)."""
    try:
        return decode(result)
    except _MALFORMED as error:
        raise ProtocolError(f"unexpected {what} result {result!r}: {error}") from None


#: What decoding a well-formed JSON message with wrong contents raises: a missing key, a
#: wrong type, a number out of range (``int(float("inf"))`` is an ``OverflowError``:
#: ``json`` reads ``1e400`` as infinity).
_MALFORMED = (KeyError, TypeError, ValueError, AttributeError, OverflowError)


def _is_id(value: Any) -> bool:
    return type(value) is int


class _Pending:
    __slots__ = ("future", "hook")

    def __init__(self, future: "asyncio.Future[Any]", hook: _Hook) -> None:
        self.future = future
        self.hook = hook


class _Connect:
    """What :func:`connect` returns: await it, or use it with ``async with``."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs
        self._conn: Optional[Connection] = None

    def __await__(self) -> Generator[Any, None, "Connection"]:
        return Connection.open(**self._kwargs).__await__()

    async def __aenter__(self) -> "Connection":
        self._conn = await Connection.open(**self._kwargs)
        return self._conn

    async def __aexit__(self, *exc: object) -> None:
        if self._conn is not None:
            await self._conn.close()


def connect(
    path: Optional[str] = None,
    *,
    reconnect: Union[bool, ReconnectPolicy] = True,
    reconnect_timeout: Optional[float] = 30.0,
    tick_buffer: int = DEFAULT_TICK_BUFFER,
    request_timeout: Optional[float] = DEFAULT_REQUEST_TIMEOUT,
) -> _Connect:
    """Connects to framerated: ``conn = await connect()`` or ``async with connect() as conn``.

    Args:
        path: the socket; ``None`` finds it the way framectl does
            (:func:`framerate.find_socket`: ``$FRAMERATED_SOCKET``, else
            ``$XDG_RUNTIME_DIR/framerated.sock`` when that socket exists, else
            ``/run/framerated/framerated.sock``). Whoever listens there must be
            root, the ``framerated`` user or this process's user.
        reconnect: reconnect and re-register links when the connection drops:
            ``True`` with the default :class:`~framerate.ReconnectPolicy`, or a
            policy; ``False`` ends every link when it drops.
        reconnect_timeout: seconds to keep trying after a drop (``None``: as
            long as the policy allows); then every link ends with
            :class:`~framerate.DaemonNotRunning` (or :class:`~framerate.Unavailable`).
        tick_buffer: undelivered ticks kept per link; when the application falls
            behind the oldest are dropped and counted in the next tick's ``skipped``.
        request_timeout: seconds a call waits for its answer (``None``: no limit);
            then it raises :class:`~framerate.DeadlineExceeded`. A daemon that is
            stopped (``SIGSTOP``) or wedged accepts connections and never answers:
            without a limit every call, and every re-registration after a reconnect,
            would wait for ever. A ``register`` that timed out leaves no link behind;
            a re-registration that timed out fails that reconnect attempt (the links
            are kept, and the next attempt follows the policy).

    Raises:
        DaemonNotRunning: nothing listens on the path (the message names every path tried).
        UntrustedDaemon: another user's process listens there (a :class:`PermissionDenied`).
        PermissionDenied: this user may not connect to the socket.
        Unavailable: another connect failure.
    """
    return _Connect(
        path=path, reconnect=reconnect, reconnect_timeout=reconnect_timeout, tick_buffer=tick_buffer,
        request_timeout=request_timeout,
    )


def _close_at_once(writer: asyncio.StreamWriter) -> None:
    """Closes ``writer``'s socket now. A plain close waits to flush what is buffered, and
    to a daemon that stopped reading (stopped, wedged) that wait never ends: the socket
    stays open, so the daemon keeps the connection's links, and a send in flight and
    ``wait_closed`` never return. Unsent bytes are discarded: the connection is gone or
    broken, or :meth:`Connection.close` already gave the daemon ``CLOSE_FLUSH_TIMEOUT``
    to read them."""
    if writer.transport.get_write_buffer_size() > 0:
        writer.transport.abort()
    else:
        writer.close()


async def _flush(writer: asyncio.StreamWriter, timeout: float) -> None:
    """Waits until the daemon has read everything buffered on ``writer``, or ``timeout``
    seconds (event-loop clock), or the connection ends, whichever comes first."""
    transport = writer.transport
    if transport.is_closing() or transport.get_write_buffer_size() == 0:
        return
    # drain() waits only down to the low-water mark; with both marks at 0 it waits until
    # nothing is left. The connection is closing, so its limits no longer matter.
    transport.set_write_buffer_limits(high=0, low=0)
    try:
        await asyncio.wait_for(writer.drain(), timeout)
    except (asyncio.TimeoutError, ConnectionError, OSError):
        pass  # stopped or wedged, or gone: what is left is discarded


def _retrieve_outcome(task: "asyncio.Task[Any]") -> None:
    """Marks a finished task's exception as seen, so that asyncio does not log it."""
    if not task.cancelled():
        task.exception()


class Connection:
    """One connection to framerated (newline-delimited JSON-RPC 2.0 on its Unix socket).

    Links and watches belong to the connection: the daemon releases them when it
    closes. Use from one event loop; calls may be made concurrently from tasks.
    """

    def __init__(
        self, path: str, *, reconnect: Union[bool, ReconnectPolicy], reconnect_timeout: Optional[float], tick_buffer: int,
        choice: Optional[SocketChoice] = None, request_timeout: Optional[float] = None,
    ) -> None:
        if tick_buffer < 1:
            raise ValueError("tick_buffer must be at least 1")
        self.path = path
        #: How :attr:`path` was chosen (for the error advice when nothing listens there).
        self.choice = choice if choice is not None and choice.path == path else SocketChoice(path, "explicit")
        self._reconnect_enabled = reconnect is not False
        #: The backoff and attempt limit used when the connection drops.
        self.policy = reconnect if isinstance(reconnect, ReconnectPolicy) else ReconnectPolicy()
        self._reconnect_timeout = reconnect_timeout
        self._request_timeout = request_timeout
        self._tick_buffer = tick_buffer
        self._writer: Optional[asyncio.StreamWriter] = None
        self._reader: Optional[asyncio.StreamReader] = None
        self._read_task: Optional["asyncio.Task[None]"] = None
        self._reconnect_task: Optional["asyncio.Task[None]"] = None
        self._pending: Dict[int, _Pending] = {}
        #: Register requests given up on (cancelled, or timed out through ``wait_for``)
        #: whose reply has not come: a link it still creates is invalidated at once, or it
        #: would vote on the daemon for the life of the connection with nobody reading it.
        self._abandoned_registers: Set[int] = set()
        self._next_id = 1
        self._links_by_id: Dict[int, DisplayLink] = {}
        self._links: List[DisplayLink] = []
        self._watches_by_id: Dict[int, Watch] = {}
        self._watches: List[Watch] = []
        # Ended links and watches whose end the application has not seen yet.
        self._ended_links: List[DisplayLink] = []
        self._ended_watches: List[Watch] = []
        self._ready = asyncio.Event()
        self._drain_lock = asyncio.Lock()
        self._closed = False
        self._reconnecting = False
        self._fatal: Optional[FrameRateError] = None
        self._unsolicited: Optional[FrameRateError] = None
        self._generation = 0
        self._healthy = False  # the current socket delivered an answer or a tick
        self._attempt = 0  # the number of the next reconnect attempt (0 first)
        self._ready_hook: Optional[Callable[[], None]] = None  # called when a tick or event is queued
        self._refusal: Optional[FrameRateError] = None
        # While a reconnect attempt registers the links and watches again, what the new
        # daemon sends for them (ticks, events, ends, the watches' ``resynchronized``)
        # waits here and reaches the application only once the attempt succeeded and
        # calls work: an application woken by a tick or an event may call at once.
        self._held: Optional[List[Callable[[], None]]] = None
        #: How many times the connection was re-established.
        self.reconnects = 0

    @classmethod
    async def open(
        cls,
        path: Optional[str] = None,
        *,
        reconnect: Union[bool, ReconnectPolicy] = True,
        reconnect_timeout: Optional[float] = 30.0,
        tick_buffer: int = DEFAULT_TICK_BUFFER,
        request_timeout: Optional[float] = DEFAULT_REQUEST_TIMEOUT,
    ) -> "Connection":
        """Same as :func:`connect`."""
        choice = find_socket(path)
        conn = cls(
            choice.path, reconnect=reconnect, reconnect_timeout=reconnect_timeout, tick_buffer=tick_buffer, choice=choice,
            request_timeout=request_timeout,
        )
        await conn._connect_once()
        conn._ready.set()
        return conn

    # -- public API ---------------------------------------------------------

    @property
    def connected(self) -> bool:
        """Whether the connection is up now (not closed, not reconnecting)."""
        return self._writer is not None and self._ready.is_set() and not self._closed and self._fatal is None

    @property
    def links(self) -> List["DisplayLink"]:
        """The live links registered on this connection."""
        return list(self._links)

    async def register(
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
        """Registers a display link (``DisplayLink/Register``), the ``CADisplayLink`` analog.

        Args:
            minimum, maximum, preferred: the ``CAFrameRateRange``, Hz;
                ``preferred=0`` means no preference.
            label: a name shown by ``framectl status``.
            high_frame_rate: declare the high-frame-rate entitlement (needed
                above 60 Hz on the ``promotion-phone`` profile).
            paused: start paused (no ticks until :meth:`DisplayLink.resume`).
            display: the display id; ``None`` for the default display.
            adaptive: step down to a lower, even rate while frames keep missing
                their deadline (measured from each tick to its
                :meth:`DisplayLink.frame_done`), and back up once they fit.
            timelines: how many future frames each tick lists in
                :attr:`Tick.timelines <framerate.Tick.timelines>` (1 to 7).
            preferred_frame_latency: in how many intervals a frame started at a
                tick is shown (1 or 2; :attr:`Tick.target_presentation_timestamp
                <framerate.Tick.target_presentation_timestamp>`).

        Raises:
            InvalidArgument: a bad range; ``.field`` names it (``"range.minimum"``).
            NotFound: no such display.
            ResourceExhausted: this connection holds the maximum number of links.
        """
        _check_range(minimum, maximum, preferred)
        link = DisplayLink(self, float(minimum), float(maximum), float(preferred), label, bool(high_frame_rate), bool(paused), display)
        link._adaptive = bool(adaptive)
        link._timelines = int(timelines)
        link._preferred_frame_latency = int(preferred_frame_latency)

        def hook(result: Any) -> None:
            link._bind(LinkStatus.from_result(result))
            self._links.append(link)

        await self._call(REGISTER, link._register_params, hook)
        return link

    async def state(self) -> CompositorState:
        """``Compositor/GetState``: every display with its rate, reason, caps and
        links, as :class:`~framerate.CompositorState` (``state["displays"]``
        still reads the wire object)."""
        return CompositorState.from_json(await self._call(GET_STATE, lambda: None))

    async def set_caps(
        self,
        display: Optional[int] = None,
        low_power_mode: Optional[bool] = None,
        limit_frame_rate: Optional[bool] = None,
        thermal_state: Optional[str] = None,
    ) -> List[Dict[str, Any]]:
        """``Compositor/SetCaps``: changes the caps named (``None`` keeps one) on
        ``display`` or, when ``None``, every display. Returns
        ``[{"display": id, "caps": {...}}, ...]``.

        Raises:
            PermissionDenied: not root, the daemon's user or an admin-group member.
            InvalidArgument: e.g. an unknown ``thermal_state``.
            NotFound: no such display.
        """
        params: Dict[str, Any] = {}
        if display is not None:
            params["display"] = display
        if low_power_mode is not None:
            params["lowPowerMode"] = bool(low_power_mode)
        if limit_frame_rate is not None:
            params["limitFrameRate"] = bool(limit_frame_rate)
        if thermal_state is not None:
            params["thermalState"] = thermal_state
        result = await self._call(SET_CAPS, lambda: params)
        return _decoded("SetCaps", result, lambda r: list(r.get("displays", []))) if isinstance(result, dict) else []

    def watch(self, event_buffer: int = DEFAULT_EVENT_BUFFER) -> "Watch":
        """Compositor events (``Compositor/Watch``): ``async for event in conn.watch()``,
        or ``async with conn.watch() as w`` (``w.state`` is the state at subscription)."""
        return Watch(self, event_buffer)

    async def health(self, service: Optional[str] = None) -> str:
        """``Health/Check``: ``"SERVING"``, or ``"NOT_SERVING"`` while the daemon stops."""
        result = await self._call(HEALTH, lambda: {"service": service} if service is not None else None)
        return str(result.get("status")) if isinstance(result, dict) else ""

    async def list_services(self) -> List[Dict[str, Any]]:
        """``Reflection/ListServices``: every service with its methods and their params."""
        result = await self._call(LIST_SERVICES, lambda: None)
        return _decoded("ListServices", result, lambda r: list(r.get("services", []))) if isinstance(result, dict) else []

    async def call(self, method: str, params: Any = None) -> Any:
        """Sends request ``method`` and returns its ``result`` unchanged. Streams
        started this way (Register, Watch) are not routed: their notifications are dropped."""
        return await self._call(method, lambda: params)

    async def notify(self, method: str, params: Any = None) -> None:
        """Sends ``method`` as a notification (no answer; dropped while disconnected)."""
        await self._send(_encode(method, params, None))

    async def close(self) -> None:
        """Closes the connection; the daemon releases its links and watches. Links'
        tick iterators finish; later calls raise :class:`~framerate.ConnectionClosed`.
        What the client still has buffered (sends not awaited) is sent first; a daemon
        that does not read it within ``CLOSE_FLUSH_TIMEOUT`` (1 s) loses it. Cancelled,
        close() still ends the connection, at once."""
        if self._closed:
            return
        self._closed = True
        self._generation += 1
        tasks = [t for t in (self._reconnect_task, self._read_task) if t is not None and t is not asyncio.current_task()]
        try:
            try:
                # What the application sent before close() (a burst of notifications
                # whose sends it did not await) reaches the daemon, unless the daemon
                # does not read it within CLOSE_FLUSH_TIMEOUT.
                if self._writer is not None:
                    await _flush(self._writer, CLOSE_FLUSH_TIMEOUT)
            finally:
                for task in tasks:
                    task.add_done_callback(_retrieve_outcome)  # failed or not, the connection is closing
                    task.cancel()
            if tasks:
                # asyncio.wait, not `await task`: a close() that is itself cancelled (a
                # wait_for's timeout) stops waiting, rather than the cancel being taken
                # for the task's.
                await asyncio.wait(tasks)
        finally:
            # Even when close() is cancelled, the connection ends: close() is not
            # called again (_closed is set).
            self._drop_transport(ConnectionClosed("the connection was closed"))
            # The application ended them: nothing is left to report, not even the ends
            # the daemon caused before (see _end_link).
            for link in list(self._links) + self._ended_links:
                self._end_link(link, None, by_application=True)
            for watch in list(self._watches) + self._ended_watches:
                self._end_watch(watch, None, by_application=True)
            self._ready.set()

    async def __aenter__(self) -> "Connection":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- requests -----------------------------------------------------------

    def _check_connected(self) -> None:
        """Raises unless a call can be sent now: the reconnect rule fails calls
        made while the connection is down at once."""
        if self._closed:
            raise ConnectionClosed("the connection was closed")
        if self._fatal is not None:
            raise self._fatal
        if not self._ready.is_set() or self._writer is None:
            raise ConnectionLost(f"the connection to framerated at {self.path} is down and reconnecting; "
                                 "call again once it is back")

    async def _call(self, method: str, params: Callable[[], Any], hook: _Hook = None) -> Any:
        """A request under the reconnect rule: it fails at once with
        :class:`ConnectionLost` while the connection is down or when it drops
        before the answer (with the daemon's refusal, e.g. its connection
        limit, when it said one)."""
        self._check_connected()
        try:
            return await self._request(method, params(), hook)
        except ConnectionLost as error:
            cause = error.cause or self._refusal
            if cause is not None:
                raise cause from None
            if self._fatal is not None and not self._reconnect_enabled:
                raise self._fatal from None
            raise

    async def _request(self, method: str, params: Any, hook: _Hook = None, deadline: Optional[float] = None) -> Any:
        """One request on the current socket, answered by ``deadline`` (the loop's clock;
        default: ``request_timeout`` from now)."""
        if self._writer is None:
            raise ConnectionLost(f"not connected to framerated at {self.path}")
        request_id = self._next_id
        self._next_id += 1
        loop = asyncio.get_running_loop()
        future: "asyncio.Future[Any]" = loop.create_future()
        self._pending[request_id] = _Pending(future, hook)
        # request_timeout covers the whole call: writing the request (a daemon that stopped
        # reading leaves it in the socket's buffers, see _send) and waiting for its answer.
        if deadline is None and self._request_timeout is not None:
            deadline = loop.time() + self._request_timeout
        try:
            await self._send(_encode(method, params, request_id), deadline)
        except BaseException:
            self._pending.pop(request_id, None)
            if future.done() and not future.cancelled():
                future.exception()  # retrieved: the connection failed it as the send failed
            raise
        try:
            if deadline is None:
                return await future
            # On timeout the future is cancelled: a Register's late reply is then invalidated.
            return await asyncio.wait_for(future, max(0.0, deadline - loop.time()))
        except asyncio.TimeoutError:
            raise DeadlineExceeded(
                f"framerated did not answer {method} within {self._request_timeout:g} s (request_timeout)"
            ) from None
        finally:
            self._pending.pop(request_id, None)
            if method == REGISTER and future.cancelled():
                self._abandoned_registers.add(request_id)

    async def _send(self, line: bytes, deadline: Optional[float] = None) -> None:
        """Writes ``line`` and waits until the socket takes it, up to ``deadline`` (the
        event loop's clock; ``None``: ``request_timeout`` from now). A daemon that is
        stopped (``SIGSTOP``) or wedged stops reading: once the socket's buffers are full
        the wait would never end, so when the deadline passes the connection is dropped
        and handled as lost (:meth:`_send_timed_out`): pending requests fail with
        :class:`ConnectionLost` and the reconnect rule applies; a notification is dropped."""
        writer = self._writer
        if writer is None:
            return
        writer.write(line)
        if writer.transport.is_closing() and not self._closed:
            self._read_what_is_left(writer)
        if not self._drain_lock.locked() and writer.transport.get_write_buffer_size() == 0:
            # The socket took the whole line (the usual case, a FrameDone per frame): the
            # drain cannot wait, and needs no timer.
            await self._drain(writer)
            return
        loop = asyncio.get_running_loop()
        if deadline is None and self._request_timeout is not None:
            deadline = loop.time() + self._request_timeout
        if deadline is None:
            await self._drain(writer)
            return
        try:
            await asyncio.wait_for(self._drain(writer), max(0.0, deadline - loop.time()))
        except asyncio.TimeoutError:
            self._send_timed_out(writer)

    async def _drain(self, writer: asyncio.StreamWriter) -> None:
        async with self._drain_lock:
            try:
                await writer.drain()
            except (ConnectionError, OSError):
                pass  # the reader notices and fails pending requests

    def _send_timed_out(self, writer: asyncio.StreamWriter) -> None:
        """The daemon did not read what was written to ``writer`` within request_timeout:
        the connection is dropped as if it had closed, so that requests in flight fail with
        :class:`ConnectionLost` and a reconnect starts (or, without reconnect, everything
        ends), instead of every later call waiting behind the stuck write."""
        if writer is not self._writer or self._closed:
            return  # that connection is already gone
        self._generation += 1  # its reader must not report this loss a second time
        writer.transport.abort()
        self._on_lost(ConnectionLost(
            f"the daemon did not read this client's requests within {self._request_timeout:g} s (request_timeout); "
            "it is stopped or wedged"
        ))

    def _read_what_is_left(self, writer: asyncio.StreamWriter) -> None:
        """The write failed because the daemon closed the socket: read what it sent
        before closing (e.g. why it refused this connection, at its connection
        limit) before asyncio closes the socket, so the loss can say why. The
        lines may already sit in the stream reader's buffer or still in the kernel's."""
        reader = self._reader
        data = b""
        if reader is not None:
            buffered = getattr(reader, "_buffer", None)  # CPython's StreamReader buffer
            if isinstance(buffered, bytearray):
                data = bytes(buffered)
                buffered.clear()
        sock = writer.get_extra_info("socket")
        fileno = sock.fileno() if sock is not None else -1
        while fileno >= 0 and len(data) < LINE_LIMIT:
            try:
                chunk = os.read(fileno, 65536)
            except OSError:  # BlockingIOError: nothing more; or the socket is gone
                break
            if not chunk:
                break
            data += chunk
        for line in data.split(b"\n")[:-1]:
            try:
                self._dispatch_line(line + b"\n")
            except ProtocolError:
                break

    # -- transport ----------------------------------------------------------

    async def _connect_once(self) -> None:
        try:
            reader, writer = await asyncio.open_unix_connection(self.path, limit=LINE_LIMIT)
        except FileNotFoundError:
            raise DaemonNotRunning(self.path, choice=self.choice) from None
        except ConnectionRefusedError:
            try:
                mode = os.stat(self.path).st_mode
            except OSError:
                mode = stat.S_IFSOCK
            if not stat.S_ISSOCK(mode):
                raise Unavailable(f"cannot connect to {self.path}: the path exists but is not a socket") from None
            raise DaemonNotRunning(self.path, "connection refused", choice=self.choice) from None
        except PermissionError:
            raise PermissionDenied(
                f"permission denied connecting to {self.path}: this user may not use this daemon's socket; "
                "ask an administrator for access, or run your own daemon with `framerated --socket PATH`"
            ) from None
        except OSError as error:
            raise Unavailable(f"cannot connect to {self.path}: {error.strerror or error}") from None
        self._check_peer(writer)
        self._generation += 1
        self._unsolicited = None
        self._healthy = False
        self._writer = writer
        self._reader = reader
        self._read_task = asyncio.get_running_loop().create_task(self._read_loop(reader, writer, self._generation))

    def _check_peer(self, writer: asyncio.StreamWriter) -> None:
        """Closes the new connection and raises unless root, the framerated user or this user listens on it."""
        try:
            uid = _trust.peer_uid(writer.get_extra_info("socket"))
        except (OSError, AttributeError) as error:
            writer.close()
            raise Unavailable(f"cannot connect to {self.path}: cannot tell who is listening (SO_PEERCRED: {error}), "
                              "so it is not trusted") from None
        if uid not in _trust.trusted_uids():
            writer.close()
            raise UntrustedDaemon(self.path, uid)

    async def _read_loop(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, generation: int) -> None:
        error: Optional[FrameRateError] = None
        try:
            while True:
                try:
                    line = await reader.readline()
                except ValueError:
                    error = ProtocolError(f"the daemon sent a line longer than {LINE_LIMIT} bytes")
                    break
                except (ConnectionError, OSError) as failure:
                    error = ConnectionLost(f"the connection to framerated at {self.path} failed: {failure}")
                    break
                if not line.endswith(b"\n"):
                    break  # end of stream (a final line without LF is incomplete)
                try:
                    self._dispatch_line(line)
                except ProtocolError as failure:
                    error = failure
                    break
        finally:
            _close_at_once(writer)
            if generation == self._generation and not self._closed:
                self._on_lost(error)
            try:
                # Retrieves the stream's close result, so that a reset connection
                # is not reported as "Future exception was never retrieved".
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass

    def _drop_transport(self, error: FrameRateError) -> None:
        if self._writer is not None:
            _close_at_once(self._writer)
            self._writer = None
        pending, self._pending = self._pending, {}
        self._abandoned_registers.clear()  # their links end with this connection
        for entry in pending.values():
            if not entry.future.done():
                failure = type(error)(error.message, status=error.status, code=error.code, data=error.data)
                failure.cause = error.cause
                entry.future.set_exception(failure)
        self._links_by_id.clear()
        self._watches_by_id.clear()
        for link in self._links:
            link._daemon_id = None
        for watch in self._watches:
            watch._daemon_id = None

    def _notify_ready(self) -> None:
        if self._ready_hook is not None:
            self._ready_hook()

    def _has_ready(self) -> bool:
        """Whether a link or watch has a tick, an event or its end for the application."""
        return any(link._ready_now() for link in self._links + self._ended_links) or any(
            watch._ready_now() for watch in self._watches + self._ended_watches)

    def _on_lost(self, error: Optional[FrameRateError]) -> None:
        cause = self._unsolicited or error  # what the daemon said, if it said anything
        message = f"the connection to framerated at {self.path} closed" + (f": {cause.message}" if cause else "")
        self._ready.clear()
        lost = ConnectionLost(message)
        # The daemon refused the connection (e.g. its connection limit): requests
        # in flight fail with that error rather than being sent again.
        lost.cause = cause if isinstance(cause, FrameRateError) and not isinstance(cause, Unavailable) else None
        self._refusal = lost.cause
        self._drop_transport(lost)
        if self._reconnecting:
            return  # the reconnect loop sees its request fail and tries again
        if self._reconnect_enabled:
            self._reconnect_task = asyncio.get_running_loop().create_task(self._reconnect())
            return
        self._fail_everything(ConnectionLost(message))

    def _fail_everything(self, error: FrameRateError) -> None:
        self._fatal = error
        for link in list(self._links):
            self._end_link(link, error)
        for watch in list(self._watches):
            self._end_watch(watch, error)
        self._ready.set()

    async def _reconnect(self) -> None:
        """Attempts until the connection is back or the policy or ``reconnect_timeout``
        gives up. A connection that dropped before it delivered an answer or a tick
        (accepted, then refused) does not start the backoff again at attempt 0."""
        loop = asyncio.get_running_loop()
        timeout = self._reconnect_timeout
        deadline = None if timeout is None else loop.time() + timeout
        if self._healthy:
            self._attempt = 0
        last_error: FrameRateError = DaemonNotRunning(self.path, choice=self.choice)
        self._reconnecting = True
        try:
            while not self._closed:
                pause = self.policy.delay(self._attempt, random.random())
                if deadline is not None:
                    pause = min(pause, max(0.0, deadline - loop.time()))
                await asyncio.sleep(pause)
                try:
                    self._held = []  # this attempt's own, from its first line on
                    await self._connect_once()
                    await self._rebind_all()
                    if self._writer is None:
                        # Every answer came, but the reader dropped the socket in the same
                        # read (EOF after the last answer, or one delivery past HELD_LIMIT),
                        # and left the retry to this loop, which is still running.
                        raise ConnectionLost(f"the connection to framerated at {self.path} closed during the attempt")
                except FrameRateError as error:  # not running, refused, untrusted, dropped, a protocol error
                    if not isinstance(error, ConnectionLost) or error.cause is not None:
                        last_error = error.cause or error
                    self._generation += 1  # the old reader must not report this loss again
                    self._drop_transport(ConnectionLost("reconnect attempt failed"))
                except (ConnectionError, OSError):
                    self._generation += 1
                    self._drop_transport(ConnectionLost("reconnect attempt failed"))
                else:  # (outside the try: what the release runs cannot fail the attempt)
                    self._attempt += 1  # back to 0 once this connection delivers something
                    self.reconnects += 1
                    self._ready.set()
                    self._release_held()
                    return
                self._attempt += 1
                gave_up = None
                if not self.policy.allows_attempt(self._attempt):
                    gave_up = f"after {self._attempt} attempts"
                elif deadline is not None and loop.time() >= deadline:
                    gave_up = f"within {timeout:g} s"
                if gave_up is not None:
                    if not isinstance(last_error, DaemonNotRunning):
                        last_error = Unavailable(
                            f"could not reconnect to framerated at {self.path} {gave_up}: {last_error.message}"
                        )
                    else:
                        last_error = DaemonNotRunning(self.path, f"gave up reconnecting {gave_up}", choice=self.choice)
                    self._fail_everything(last_error)
                    return
        finally:
            self._reconnecting = False
            self._held = None  # a failed attempt's deliveries came from a dropped daemon

    def _end_link_unless_ended(self, link: "DisplayLink", error: FrameRateError) -> None:
        if not link._ended:
            self._end_link(link, error)

    def _end_watch_unless_ended(self, watch: "Watch", error: FrameRateError) -> None:
        if not watch._ended:
            self._end_watch(watch, error)

    def _deliver(self, action: Callable[[], None]) -> None:
        """Runs ``action`` (a delivery to the application) now, or after the reconnect
        attempt under way succeeded (see ``_held``), in the order the daemon sent them."""
        if self._held is None:
            action()
        elif len(self._held) < HELD_LIMIT:
            self._held.append(action)
        else:  # the reader drops the connection: the attempt fails, and the next one starts afresh
            raise ProtocolError(f"the daemon sent {HELD_LIMIT} ticks and events before it answered "
                                "the re-registrations")

    def _release_held(self) -> None:
        held, self._held = self._held or [], None
        for action in held:
            action()

    async def _rebind_all(self) -> None:
        # Every Register sent at once (in the links' order, so the new daemon numbers them
        # in that order), then, once all are answered, every Watch at once; all answered
        # within one request_timeout from the start: a daemon that comes back slow costs
        # the attempt one timeout, not one per link and watch. UNAVAILABLE (the daemon is
        # stopping again) and no answer in time (stopped, wedged) fail this attempt: the
        # reconnect loop drops the connection, which releases on the daemon what the
        # requests created, and tries again with the backoff. Any other refusal ends that
        # link (or watch) once the attempt succeeded; until then, like every delivery of
        # the attempt, the end is held (``_deliver``). The watches are subscribed again
        # only after every Register is answered, so that an attempt whose Registers fail
        # sends no Watch. A link invalidated, or a watch unwatched, while its request is
        # in flight is let go by its hook when the answer comes (``_rebind``).
        loop = asyncio.get_running_loop()
        deadline = None if self._request_timeout is None else loop.time() + self._request_timeout
        links = [link for link in sorted(self._links, key=lambda link: link.id) if not link._ended]
        await self._rebind_batch(
            links, [self._request(REGISTER, link._register_params(), link._rebind, deadline) for link in links])
        watches = [watch for watch in sorted(self._watches, key=lambda watch: watch.id or 0) if not watch._ended]
        await self._rebind_batch(watches, [self._request(WATCH, None, watch._rebind, deadline) for watch in watches])

    async def _rebind_batch(self, items: Sequence[Union["DisplayLink", "Watch"]], requests: List[Awaitable[Any]]) -> None:
        """Waits for every request of ``requests`` (one per item of ``items``), then ends
        the items the daemon refused, and raises the first failure of the attempt."""
        outcomes = await asyncio.gather(*requests, return_exceptions=True)
        failed: Optional[BaseException] = None
        for item, outcome in zip(items, outcomes):
            if not isinstance(outcome, BaseException):
                continue
            if isinstance(outcome, (Unavailable, DeadlineExceeded)) or not isinstance(outcome, FrameRateError):
                failed = failed or outcome
            elif item._ended:
                continue  # ended by the application meanwhile: nothing to report
            elif isinstance(item, DisplayLink):
                # e.g. the new daemon has no such display. Held like the rest: if a later
                # request of the attempt fails, the link is registered again next attempt.
                self._deliver(functools.partial(self._end_link_unless_ended, item, outcome))
            else:
                self._deliver(functools.partial(self._end_watch_unless_ended, item, outcome))
        if failed is not None:
            raise failed

    # -- incoming lines -----------------------------------------------------

    def _dispatch_line(self, line: bytes) -> None:
        text = line.strip(b" \t\r\n")
        if not text:
            return
        try:
            message = json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as error:
            raise ProtocolError(f"the daemon sent a line that is not JSON: {error}") from None
        if isinstance(message, list):
            for element in message:
                self._dispatch(element)
        else:
            self._dispatch(message)

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):
            raise ProtocolError(f"the daemon sent a {type(message).__name__}, not an object")
        method = message.get("method")
        if isinstance(method, str):
            params = message.get("params")
            self._notification(method, params if isinstance(params, dict) else {})
            return
        if "id" not in message:
            return
        request_id = message["id"]
        if request_id is None:
            if "error" in message:  # unsolicited: connection limit, shutting down
                self._unsolicited = error_from_response(message["error"])
            return
        entry = self._pending.pop(request_id, None) if _is_id(request_id) else None
        if entry is None and _is_id(request_id) and request_id in self._abandoned_registers:
            self._abandoned_registers.discard(request_id)
            self._invalidate_abandoned(message.get("result"))
            return
        if entry is None or entry.future.done():
            return
        if "error" in message:
            entry.future.set_exception(error_from_response(message["error"]))
            return
        result = message.get("result")
        self._refusal = None  # this connection works
        self._healthy = True
        if entry.hook is not None:
            try:
                entry.hook(result)
            except Exception as error:  # the hook reads the daemon's result: anything wrong in it fails this call
                entry.future.set_exception(ProtocolError(f"unexpected result {result!r}: {error}"))
                return
        entry.future.set_result(result)

    def _invalidate_abandoned(self, result: Any) -> None:
        """Ends the link a Register given up on created after all."""
        link = result.get("link") if isinstance(result, dict) else None
        if isinstance(link, int) and _is_id(link):
            self._send_invalidate(link)

    def _send_invalidate(self, daemon_id: int) -> None:
        """Sends ``Invalidate`` for a link the application no longer has, as a
        notification (no reply to wait for, and nothing to report if it fails)."""
        self._send_notification(INVALIDATE, {"link": daemon_id})

    def _send_unwatch(self, daemon_id: int) -> None:
        """Sends ``Unwatch`` for a watch the application no longer has, as a notification."""
        self._send_notification(UNWATCH, {"watch": daemon_id})

    def _send_notification(self, method: str, params: Dict[str, Any]) -> None:
        writer = self._writer
        if writer is not None and not writer.transport.is_closing():
            writer.write(_encode(method, params, None))

    def _notification(self, method: str, params: Dict[str, Any]) -> None:
        if method == TICK:
            self._healthy = True
            link_id = params.get("link")
            link = self._links_by_id.get(link_id) if isinstance(link_id, int) and _is_id(link_id) else None
            if link is None:
                return
            try:
                tick = Tick.from_params(params)
            except _MALFORMED as error:
                raise ProtocolError(f"malformed tick {params!r}: {error}") from None
            self._deliver(functools.partial(link._on_wire_tick, tick))
        elif method == CLOSED:
            link_id = params.get("link")
            link = self._links_by_id.pop(link_id, None) if isinstance(link_id, int) and _is_id(link_id) else None
            if link is None:
                return
            status = params.get("status")
            link._daemon_id = None  # gone from the daemon: an invalidate() meanwhile succeeds at once
            if status == "UNAVAILABLE" and self._reconnect_enabled and not self._closed:
                return  # the daemon is stopping: registered again after the reconnect
            message = params.get("message")
            closed = error_from_status(status, message if isinstance(message, str) else "the daemon closed the link")
            self._deliver(functools.partial(self._end_link_unless_ended, link, closed))
        elif method == PRESENTED:
            link_id = params.get("link")
            link = self._links_by_id.get(link_id) if isinstance(link_id, int) and _is_id(link_id) else None
            if link is None:
                return
            try:
                frame = Presented.from_params(params)
            except _MALFORMED as error:
                raise ProtocolError(f"malformed Presented {params!r}: {error}") from None
            self._deliver(functools.partial(link._on_presented, frame))
        elif method == EVENT:
            watch_id = params.get("watch")
            watch = self._watches_by_id.get(watch_id) if isinstance(watch_id, int) and _is_id(watch_id) else None
            if watch is not None:
                try:
                    event = Event.from_params(params)
                except _MALFORMED as error:
                    raise ProtocolError(f"malformed Event {params!r}: {error}") from None
                self._deliver(functools.partial(watch._push, event))

    def _claim_link_id(self, preferred: int) -> int:
        live = [link._app_id for link in self._links if link._app_id is not None]
        return preferred if preferred not in live else max(live) + 1

    def _claim_watch_id(self, preferred: int) -> int:
        live = [watch._app_id for watch in self._watches if watch._app_id is not None]
        return preferred if preferred not in live else max(live) + 1

    def _end_link(self, link: "DisplayLink", error: Optional[FrameRateError], by_application: bool = False) -> None:
        """Ends ``link``. An end the application did not cause (the daemon closed the
        link, the connection gave up) is queued in ``_ended_links`` until the application
        takes it (:meth:`DisplayLink.poll_tick`, iteration), and makes the blocking
        connection's ``fileno()`` readable meanwhile. One it caused (``invalidate()``,
        leaving ``async with``, :meth:`close`), also of a link the daemon had ended
        before, counts as reported: nothing is queued or signalled for it, since no
        application polls a link it disposed of (its descriptor would stay readable, and
        the link would be kept, for ever); iterating or polling it still ends as documented."""
        if link in self._links:
            self._links.remove(link)
        if link._daemon_id is not None and self._links_by_id.get(link._daemon_id) is link:
            del self._links_by_id[link._daemon_id]
        self._record_end(link, error, self._ended_links, by_application)

    def _end_watch(self, watch: "Watch", error: Optional[FrameRateError], by_application: bool = False) -> None:
        """Ends ``watch``; ``by_application`` as in :meth:`_end_link` (``unwatch()``,
        leaving ``async with``, :meth:`close`)."""
        if watch in self._watches:
            self._watches.remove(watch)
        if watch._daemon_id is not None and self._watches_by_id.get(watch._daemon_id) is watch:
            del self._watches_by_id[watch._daemon_id]
        self._record_end(watch, error, self._ended_watches, by_application)

    def _record_end(self, item: Union["DisplayLink", "Watch"], error: Optional[FrameRateError],
                    ended: List[Any], by_application: bool) -> None:
        """Ends ``item`` (a link or a watch) and keeps its end in ``ended`` (its kind's list
        of ends not yet reported) unless the application caused it (see :meth:`_end_link`)."""
        if by_application:
            item._end(error)
            item._end_reported = True
            if item in ended:
                ended.remove(item)
            return
        if not item._ended:
            ended.append(item)
        item._end(error)
        self._notify_ready()


def _encode(method: str, params: Any, request_id: Optional[int]) -> bytes:
    message: Dict[str, Any] = {"jsonrpc": "2.0"}
    if request_id is not None:
        message["id"] = request_id
    message["method"] = method
    if params is not None:
        message["params"] = params
    try:
        return json.dumps(message, separators=(",", ":"), allow_nan=False).encode() + b"\n"
    except ValueError as error:
        raise InvalidArgument(f"params cannot be sent as JSON: {error}") from None


def _check_range(minimum: Any, maximum: Any, preferred: Any) -> None:
    for name, value in (("minimum", minimum), ("maximum", maximum), ("preferred", preferred)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise InvalidArgument(
                f"range.{name} must be a number, got {type(value).__name__}",
                code=-32602,
                data={"status": "INVALID_ARGUMENT", "field": f"range.{name}"},
            )
        if not math.isfinite(value):
            raise InvalidArgument(
                f"invalid range: {name} must be finite, got {value}",
                code=-32602,
                data={"status": "INVALID_ARGUMENT", "field": f"range.{name}"},
            )


_GAP_NONE, _GAP_RECONNECTED, _GAP_RESUMED = 0, 1, 2


def skipped_intervals(previous: float, next_: float, callback_rate: float) -> int:
    """The intervals of a link at ``callback_rate`` Hz that passed without a tick
    between ticks at ``previous`` and ``next_`` (seconds):
    ``max(1, round((next_ - previous) * callback_rate) - 1)``, rounding half away
    from zero (as the Swift and C clients do; not Python's banker's ``round``)."""
    x = (next_ - previous) * callback_rate
    if not math.isfinite(x):
        return 1
    intervals = math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)
    return int(min(intervals - 1, 2 ** 53)) if intervals - 1 > 1 else 1


def _content_velocity_param(content_velocity: Optional[float]) -> Dict[str, Any]:
    """``{"contentVelocity": v}`` for FrameDone and Present, or ``{}`` for ``None``.
    Raises ``ValueError`` unless ``v`` is a finite number >= 0 (points per second)."""
    if content_velocity is None:
        return {}
    velocity = float(content_velocity)
    if not math.isfinite(velocity) or velocity < 0:
        raise ValueError(f"content_velocity must be a finite number of points per second >= 0, got {content_velocity!r}")
    return {"contentVelocity": velocity}


class DisplayLink:
    """A display link registered with :meth:`Connection.register` (``CADisplayLink``).

    Iterate it for its ticks (``async for tick in link``); the iteration ends
    after :meth:`invalidate` or :meth:`Connection.close`, and raises the error
    (e.g. :class:`~framerate.Unavailable`) when the daemon ended the link and it
    could not be registered again. Tick times are ``CLOCK_MONOTONIC`` seconds
    (:func:`time.monotonic`).

    The object, its :attr:`id` and its tick numbering survive reconnects: the
    first tick after a re-registration reports the outage as one gap,
    ``skipped = max(1, round((timestamp - last.timestamp) * callback_rate) - 1)``
    (0 if the link was paused), and ``sequence == previous.sequence + skipped + 1``
    keeps holding. :attr:`daemon_id` is the daemon's id for it now.
    """

    def __init__(
        self,
        conn: Connection,
        minimum: float,
        maximum: float,
        preferred: float,
        label: Optional[str],
        high_frame_rate: bool,
        paused: bool,
        display: Optional[int],
    ) -> None:
        self._conn = conn
        self._range = (minimum, maximum, preferred)
        self._label = label
        self._high_frame_rate = high_frame_rate
        self._adaptive = False
        self._timelines = 1
        self._preferred_frame_latency = 1
        self._boosted_until: Optional[float] = None
        self._paused = paused
        self._display = display
        self._app_id: Optional[int] = None
        self._daemon_id: Optional[int] = None
        self._status: Optional[LinkStatus] = None
        self._queue: Deque[Tick] = collections.deque(maxlen=conn._tick_buffer)
        self._presented: Deque[Presented] = collections.deque(maxlen=conn._tick_buffer)
        self._wakeup = asyncio.Event()
        self._ended = False
        self._error: Optional[FrameRateError] = None
        # Renumbering across re-registrations (the Swift client's TickSequencer).
        self._gap = _GAP_NONE
        self._app_base = 0
        self._daemon_base = 0
        self._last: Optional[Tuple[int, float]] = None  # (sequence, timestamp) of the last tick received
        self._last_delivered: Optional[int] = None
        self._end_reported = False

    # -- properties ---------------------------------------------------------

    @property
    def id(self) -> int:
        """The link's id for the application: the daemon's id at its first
        registration (or, if a live link of this connection already has that id
        after a reconnect, one more than the largest live id). Ticks carry it."""
        return self._app_id or 0

    @property
    def daemon_id(self) -> Optional[int]:
        """The id of the link on the daemon it is registered with now (``None``
        while the connection is down)."""
        return self._daemon_id

    @property
    def status(self) -> Optional[LinkStatus]:
        """The latest Register or Update result (the rate the display is moving to)."""
        return self._status

    @property
    def range(self) -> Tuple[float, float, float]:
        """``(minimum, maximum, preferred)``, Hz, as last registered or updated."""
        return self._range

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def label(self) -> Optional[str]:
        return self._label

    @property
    def high_frame_rate(self) -> bool:
        return self._high_frame_rate

    @property
    def display(self) -> Optional[int]:
        """The display the link is on."""
        return self._display

    @property
    def adaptive(self) -> bool:
        """Whether the link steps down while its frames keep missing their deadline."""
        return self._adaptive

    @property
    def boosted_until(self) -> Optional[float]:
        """When the latest :meth:`boost` ends, seconds on ``CLOCK_MONOTONIC`` (``None`` before one)."""
        return self._boosted_until

    @property
    def ended(self) -> bool:
        """Whether the link ended (invalidated, connection closed, or closed by the daemon)."""
        return self._ended

    @property
    def error(self) -> Optional[FrameRateError]:
        """Why the link ended, when it was not invalidated or closed by the application."""
        return self._error

    def __repr__(self) -> str:
        return (f"<DisplayLink id={self.id} daemon_id={self._daemon_id} range={self._range} "
                f"paused={self._paused} ended={self._ended}>")

    # -- operations ---------------------------------------------------------

    def _attached_id(self) -> int:
        if self._ended:
            raise NotFound(f"link {self.id} has ended", data={"status": "NOT_FOUND"})
        if self._daemon_id is None:  # the connection is down, or the daemon is stopping
            raise ConnectionLost(f"link {self.id} is being registered again after the daemon went away; "
                                 "call again once the connection is back")
        return self._daemon_id

    async def update(
        self,
        minimum: Optional[float] = None,
        maximum: Optional[float] = None,
        preferred: float = 0,
        *,
        paused: Optional[bool] = None,
        adaptive: Optional[bool] = None,
        timelines: Optional[int] = None,
        preferred_frame_latency: Optional[int] = None,
    ) -> LinkStatus:
        """``DisplayLink/Update``: a new range (``minimum`` and ``maximum`` together;
        ``preferred`` defaults to 0 = no preference, as on the wire), paused flag,
        number of ``timelines`` (1 to 7) and/or ``preferred_frame_latency`` (1 or 2).

        Raises:
            InvalidArgument: a bad range (``.field`` names it).
            NotFound: the link no longer exists (e.g. invalidated).
        """
        if (minimum is None) != (maximum is None):
            raise ValueError("give both minimum and maximum to change the range, or neither")
        new_range = None
        if minimum is not None and maximum is not None:
            _check_range(minimum, maximum, preferred)
            new_range = (float(minimum), float(maximum), float(preferred))

        def params() -> Dict[str, Any]:
            result: Dict[str, Any] = {"link": self._attached_id()}
            if new_range is not None:
                result["range"] = {"minimum": new_range[0], "maximum": new_range[1], "preferred": new_range[2]}
            if paused is not None:
                result["paused"] = bool(paused)
            if adaptive is not None:
                result["adaptive"] = bool(adaptive)
            if timelines is not None:
                result["timelines"] = int(timelines)
            if preferred_frame_latency is not None:
                result["preferredFrameLatency"] = int(preferred_frame_latency)
            return result

        result = await self._conn._call(UPDATE, params)
        if adaptive is not None:
            self._adaptive = bool(adaptive)
        if timelines is not None:
            self._timelines = int(timelines)
        if preferred_frame_latency is not None:
            self._preferred_frame_latency = int(preferred_frame_latency)
        if new_range is not None:
            self._range = new_range
        if paused is not None:
            self._paused = bool(paused)
            if paused and self._gap == _GAP_RECONNECTED:
                self._gap = _GAP_RESUMED  # a resume reports no skip
        self._status = dataclasses.replace(_decoded("Update", result, LinkStatus.from_result), link=self.id, display=self._display)
        return self._status

    async def boost(
        self,
        duration: float,
        minimum: Optional[float] = None,
        maximum: Optional[float] = None,
        preferred: float = 0,
    ) -> LinkStatus:
        """``DisplayLink/Boost``: for ``duration`` seconds (``0 < duration <= 5``) the
        link votes ``minimum..maximum`` (default: its own maximum as minimum, maximum
        and preferred rate) instead of its range; its ticks carry ``boosted``. A later
        boost only moves the end later, so send one per scroll event to hold the rate
        while the scroll lasts. :attr:`boosted_until` says when it ends.

        Raises:
            ValueError: ``duration`` outside ``(0, 5]``, or only one of minimum/maximum.
            InvalidArgument: a bad range (``.field`` names it).
            NotFound: the link no longer exists.
        """
        duration = float(duration)
        if not (0 < duration <= MAX_BOOST_DURATION):
            raise ValueError(f"a boost lasts 0 < duration <= {MAX_BOOST_DURATION:g} seconds, got {duration!r}")
        if (minimum is None) != (maximum is None):
            raise ValueError("give both minimum and maximum for a boost range, or neither for the link's maximum")
        boost_range = None
        if minimum is not None and maximum is not None:
            _check_range(minimum, maximum, preferred)
            boost_range = {"minimum": float(minimum), "maximum": float(maximum), "preferred": float(preferred)}

        def params() -> Dict[str, Any]:
            result: Dict[str, Any] = {"link": self._attached_id(), "duration": duration}
            if boost_range is not None:
                result["range"] = boost_range
            return result

        result = await self._conn._call(BOOST, params)
        status = _decoded("Boost", result, LinkStatus.from_result)
        self._boosted_until = _decoded("Boost", result, lambda r: float(r["boostedUntil"]))
        self._status = dataclasses.replace(status, link=self.id, display=self._display)
        return self._status

    async def pause(self) -> LinkStatus:
        """Pauses the link: it neither votes nor ticks until :meth:`resume`."""
        return await self.update(paused=True)

    async def resume(self) -> LinkStatus:
        """Resumes a paused link (the paused time is not reported as skipped)."""
        return await self.update(paused=False)

    async def invalidate(self) -> None:
        """``DisplayLink/Invalidate``: removes the link; iteration ends (ticks queued
        before still come first). While the connection is reconnecting this succeeds at
        once (the link is not registered again). The application ended the link itself,
        so its end is not reported as waiting: it does not make the blocking
        connection's ``fileno()`` readable (nor does an end the daemon caused before, once
        the link is invalidated).

        Raises:
            NotFound: the daemon does not know the link (already invalidated, or ended).
        """
        conn = self._conn
        if self._ended:
            conn._end_link(self, self._error, by_application=True)  # disposed of: nothing to report
            raise NotFound(f"link {self.id} does not exist (already invalidated)", data={"status": "NOT_FOUND"})
        # Not only while connected: during a reconnect a link already registered again has
        # a daemon id on the new socket (one not yet registered has none, and is skipped).
        if self._daemon_id is not None and conn._writer is not None and not conn._closed:
            try:
                await conn._request(INVALIDATE, {"link": self._daemon_id})
            except Unavailable:
                pass  # the daemon is stopping or the connection dropped: either releases the link
            except NotFound:
                conn._end_link(self, None, by_application=True)
                raise
        conn._end_link(self, None, by_application=True)

    async def frame_done(self, sequence: int, content_velocity: Optional[float] = None) -> None:
        """``DisplayLink/FrameDone`` as a notification: the frame for tick
        ``sequence`` (this object's numbering) is finished. From the first one on,
        the daemon skips intervals that begin while a frame is unfinished instead
        of queueing ticks. Dropped while the connection is down; a sequence from
        before the latest re-registration is sent as 0 (it only turns pacing on;
        :meth:`present` reports such a tick's frame the same way).

        ``content_velocity`` (points per second, finite, >= 0) is the speed of the
        frame's fastest-moving content: the panel rate then follows the display
        profile's velocity table while the callbacks keep their rate (a report counts
        for 0.5 s). Raises ``ValueError`` for a negative or non-finite velocity."""
        velocity = _content_velocity_param(content_velocity)
        if self._ended or self._daemon_id is None or not self._conn.connected:
            return
        params: Dict[str, Any] = {"link": self._daemon_id, "sequence": self._daemon_sequence(int(sequence))}
        params.update(velocity)
        await self._conn._send(_encode(FRAME_DONE, params, None))

    async def __aenter__(self) -> "DisplayLink":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                        traceback: Optional[TracebackType]) -> None:
        """``async with await conn.register(...) as link:`` invalidates the link on the way out
        (unless it already ended; either way its end is not reported as waiting, see
        :meth:`invalidate`)."""
        if not self._ended:
            try:
                await self.invalidate()
            except NotFound:
                pass  # ended meanwhile
        else:
            self._conn._end_link(self, self._error, by_application=True)

    async def present(self, sequence: int, at: Optional[float] = None, after_minimum_duration: Optional[float] = None,
                      vsync_id: Optional[int] = None, content_velocity: Optional[float] = None) -> None:
        """``DisplayLink/Present`` as a notification: the frame for tick ``sequence``
        (this object's numbering) is committed now. The daemon shows it at the first
        vsync at or after the latest of now, ``at`` (``CLOCK_MONOTONIC`` seconds,
        ``present(at:)``) and the previous shown frame plus ``after_minimum_duration``
        (seconds), and reports it as a :class:`~framerate.Presented` (see
        :meth:`presented`). Counts as :meth:`frame_done`, ``content_velocity`` included.
        Dropped while the connection is down.
        ``vsync_id`` (a :class:`~framerate.FrameTimeline`'s) aims the frame at that entry: it
        is shown no earlier than its ``presentation_time``, and its hitch is measured from it.

        A tick from before the latest re-registration (the daemon restarted since, or the
        link's first tick after the reconnect has not come yet) cannot be presented: the
        daemon now serving the link never sent it, and ``Present`` names a tick it sent.
        Its frame is reported as finished instead, as :meth:`frame_done` reports such a tick
        (``FrameDone`` with sequence 0, and ``content_velocity``), which keeps the pacing a
        Present gives; it is not shown, and no :class:`~framerate.Presented` comes for it."""
        velocity = _content_velocity_param(content_velocity)
        if self._ended or self._daemon_id is None or not self._conn.connected:
            return
        daemon_sequence = self._daemon_sequence(int(sequence))
        params: Dict[str, Any] = {"link": self._daemon_id, "sequence": daemon_sequence}
        params.update(velocity)
        if daemon_sequence == 0:  # not a tick of this registration (Present needs sequence >= 1)
            await self._conn._send(_encode(FRAME_DONE, params, None))
            return
        if at is not None:
            params["at"] = float(at)
        if after_minimum_duration is not None:
            params["afterMinimumDuration"] = float(after_minimum_duration)
        if vsync_id is not None:
            params["vsyncId"] = int(vsync_id)
        await self._conn._send(_encode(PRESENT, params, None))

    def presented(self) -> List[Presented]:
        """The :class:`~framerate.Presented` reports received since the last call, oldest
        first (at most as many as the tick buffer holds; older ones are dropped)."""
        # popleft until empty, not list() then clear(): the blocking API calls this from
        # the application's thread while the loop thread appends (deque's append and
        # popleft are atomic; a report appended between a copy and a clear was lost).
        frames: List[Presented] = []
        while True:
            try:
                frames.append(self._presented.popleft())
            except IndexError:
                return frames

    # -- ticks --------------------------------------------------------------

    def __aiter__(self) -> "DisplayLink":
        return self

    def _ready_now(self) -> bool:
        return bool(self._queue) or (self._ended and not self._end_reported)

    def _take(self) -> Optional[Tick]:
        """The next queued tick, or ``None`` if none is queued; at the end raises
        :class:`StopAsyncIteration` (clean) or the error the link ended with."""
        if self._queue:
            tick = self._queue.popleft()
            last = self._last_delivered
            if last is not None and tick.sequence > last and tick.sequence - last - 1 != tick.skipped:
                # Ticks this client dropped (the application fell behind) count as skipped.
                tick = _replace_skipped(tick, tick.sequence - last - 1)
            self._last_delivered = tick.sequence
            return tick
        if self._ended:
            if not self._end_reported:
                self._end_reported = True
                if self in self._conn._ended_links:
                    self._conn._ended_links.remove(self)
            if self._error is not None:
                raise self._error
            raise StopAsyncIteration
        return None

    async def __anext__(self) -> Tick:
        while True:
            tick = self._take()
            if tick is not None:
                return tick
            self._wakeup.clear()
            await self._wakeup.wait()

    async def next_tick(self, timeout: Optional[float] = None) -> Tick:
        """The next tick, waiting through a reconnect.

        Raises:
            TimeoutError: no tick within ``timeout`` seconds (``None``: no limit).
            LinkEnded: the link ended cleanly (invalidated, or the connection closed).
            FrameRateError: the error the link ended with (e.g. :class:`~framerate.DaemonNotRunning`
                when the daemon did not come back).
        """
        try:
            return await asyncio.wait_for(self.__anext__(), timeout)
        except StopAsyncIteration:
            raise LinkEnded(f"link {self.id} has ended", data={"status": "CANCELLED"}) from None
        except asyncio.TimeoutError:
            raise TimeoutError(f"no tick of link {self.id} within {timeout} s") from None

    def poll_tick(self) -> Optional[Tick]:
        """The next tick if one is queued now, else ``None``, without waiting; raises as
        :meth:`next_tick` once the link ended."""
        try:
            return self._take()
        except StopAsyncIteration:
            raise LinkEnded(f"link {self.id} has ended", data={"status": "CANCELLED"}) from None

    # -- connection callbacks -----------------------------------------------

    def _register_params(self) -> Dict[str, Any]:
        minimum, maximum, preferred = self._range
        params: Dict[str, Any] = {"range": {"minimum": minimum, "maximum": maximum, "preferred": preferred}}
        if self._display is not None:
            params["display"] = self._display
        if self._paused:
            params["paused"] = True
        if self._label is not None:
            params["label"] = self._label
        if self._high_frame_rate:
            params["highFrameRate"] = True
        if self._adaptive:
            params["adaptive"] = True
        if self._timelines != 1:
            params["timelines"] = self._timelines
        if self._preferred_frame_latency != 1:
            params["preferredFrameLatency"] = self._preferred_frame_latency
        return params

    def _bind(self, status: LinkStatus) -> None:
        """A Register for this link was answered (runs in the reader, before the next line)."""
        self._daemon_id = status.link
        if self._app_id is None:
            self._app_id = self._conn._claim_link_id(status.link)
        if status.display is not None:
            self._display = status.display
        self._status = dataclasses.replace(status, link=self._app_id)
        self._conn._links_by_id[status.link] = self

    def _rebind(self, result: Any) -> None:
        status = LinkStatus.from_result(result)
        if self._ended:
            # Invalidated while this Register was in flight: the daemon has the link again.
            # It goes now, before any of its ticks is read, and is not mapped: none reaches
            # the ended link.
            self._conn._send_invalidate(status.link)
            return
        if self._gap != _GAP_RESUMED:
            self._gap = _GAP_RESUMED if self._paused else _GAP_RECONNECTED
        self._bind(status)

    def _daemon_sequence(self, sequence: int) -> int:
        if self._gap != _GAP_NONE or sequence < self._app_base:
            return 0
        return self._daemon_base + (sequence - self._app_base)

    def _on_wire_tick(self, tick: Tick) -> None:
        if self._ended:
            return  # ended while the tick was held (``Connection._deliver``)
        last = self._last
        if self._gap == _GAP_NONE or last is None:
            sequence = self._app_base + (tick.sequence - self._daemon_base) if tick.sequence >= self._daemon_base else self._app_base
            skipped = tick.skipped
        elif self._gap == _GAP_RECONNECTED:
            skipped = skipped_intervals(last[1], tick.timestamp, tick.callback_rate)
            sequence = last[0] + skipped + 1
        else:
            sequence, skipped = last[0] + 1, 0
        if self._gap != _GAP_NONE:
            self._gap = _GAP_NONE
            self._app_base = sequence
            self._daemon_base = tick.sequence
        self._last = (sequence, tick.timestamp)
        self._queue.append(dataclasses.replace(tick, link=self.id, sequence=sequence, skipped=skipped))
        self._wakeup.set()
        self._conn._notify_ready()

    def _on_presented(self, frame: Presented) -> None:
        if self._ended:
            return
        daemon_sequence = frame.sequence
        sequence = self._app_base + (daemon_sequence - self._daemon_base) if daemon_sequence >= self._daemon_base else self._app_base
        self._presented.append(dataclasses.replace(frame, link=self.id, sequence=sequence))

    def _end(self, error: Optional[FrameRateError]) -> None:
        if self._ended:
            return
        self._ended = True
        self._error = error
        self._daemon_id = None
        self._wakeup.set()


def _replace_skipped(tick: Tick, skipped: int) -> Tick:
    return dataclasses.replace(tick, skipped=skipped)


class Watch:
    """A subscription to compositor events (``Compositor/Watch``).

    ``async for event in watch`` starts it if needed and yields
    :class:`~framerate.Event` objects; ``state`` is the GetState result taken
    with the subscription. After a reconnect the watch is started again (same
    :attr:`id`) and a ``resynchronized`` event carries the new daemon's state in
    ``event["state"]``. :meth:`unwatch` ends it.
    """

    def __init__(self, conn: Connection, event_buffer: int) -> None:
        self._conn = conn
        self._app_id: Optional[int] = None
        self._daemon_id: Optional[int] = None
        #: The GetState result taken with the (latest) subscription.
        self.state: Optional[CompositorState] = None
        self._state_json: Dict[str, Any] = {}
        self._queue: Deque[Event] = collections.deque(maxlen=max(1, event_buffer))
        self._wakeup = asyncio.Event()
        self._started = False
        self._ended = False
        self._end_reported = False
        self._error: Optional[FrameRateError] = None

    @property
    def id(self) -> Optional[int]:
        """The watch's id (the daemon's at the first subscription; kept across reconnects)."""
        return self._app_id

    async def start(self) -> CompositorState:
        """Subscribes (once); returns the state at subscription. If the ``Watch`` call
        fails, the error is raised and a later ``start()`` (or iteration) tries again."""
        if not self._started:
            self._started = True

            def hook(result: Any) -> None:
                self._bind(result)
                self._conn._watches.append(self)

            try:
                await self._conn._call(WATCH, lambda: None, hook)
            except BaseException:
                self._started = False  # not subscribed: nothing would ever end or feed it
                raise
        assert self.state is not None
        return self.state

    async def unwatch(self) -> None:
        """``Compositor/Unwatch``; iteration ends (events queued before still come
        first). The application ended the watch itself, so its end (or an earlier one
        the daemon caused) is not reported as waiting: it does not make the blocking
        connection's ``fileno()`` readable."""
        conn = self._conn
        # Not only while connected: during a reconnect a watch already subscribed again
        # has a daemon id on the new socket (one not yet subscribed has none: its hook lets
        # it go when the answer comes), as for DisplayLink.invalidate.
        if self._ended or self._daemon_id is None or conn._writer is None or conn._closed:
            self._conn._end_watch(self, self._error, by_application=True)
            return
        try:
            await self._conn._request(UNWATCH, {"watch": self._daemon_id})
        except Unavailable:
            pass
        finally:
            self._conn._end_watch(self, None, by_application=True)

    def __aiter__(self) -> "Watch":
        return self

    def _ready_now(self) -> bool:
        return bool(self._queue) or (self._ended and not self._end_reported)

    def _take(self) -> Optional[Event]:
        if self._queue:
            return self._queue.popleft()
        if self._ended:
            if not self._end_reported:
                self._end_reported = True
                if self in self._conn._ended_watches:
                    self._conn._ended_watches.remove(self)
            if self._error is not None:
                raise self._error
            raise StopAsyncIteration
        return None

    async def __anext__(self) -> Event:
        if not self._started:
            await self.start()
        while True:
            event = self._take()
            if event is not None:
                return event
            self._wakeup.clear()
            await self._wakeup.wait()

    async def next_event(self, timeout: Optional[float] = None) -> Optional[Event]:
        """The next event, or ``None`` once the watch ended; raises
        :class:`TimeoutError` after ``timeout`` seconds without one."""
        try:
            return await asyncio.wait_for(self.__anext__(), timeout)
        except StopAsyncIteration:
            return None
        except asyncio.TimeoutError:
            raise TimeoutError(f"no event within {timeout} s") from None

    def poll_event(self) -> Optional[Event]:
        """The next event if one is queued now, else ``None`` (also once the watch ended)."""
        try:
            return self._take()
        except StopAsyncIteration:
            return None

    async def __aenter__(self) -> "Watch":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if not self._conn._closed:
            await self.unwatch()

    def _bind(self, result: Any) -> None:
        self._daemon_id = int(result["watch"])
        if self._app_id is None:
            self._app_id = self._conn._claim_watch_id(self._daemon_id)
        self._state_json = dict(result["state"])
        self.state = CompositorState.from_json(self._state_json)
        self._conn._watches_by_id[self._daemon_id] = self

    def _rebind(self, result: Any) -> None:
        if self._ended:
            # Unwatched while this Watch was in flight: the daemon subscribed it again. It
            # goes now, and no event (nor the resynchronized one) reaches the ended watch.
            self._conn._send_unwatch(int(result["watch"]))
            return
        self._bind(result)
        resynchronized = Event(kind="resynchronized", display=None, watch=self._app_id or 0,
                               data={"watch": self._app_id, "kind": "resynchronized", "state": self._state_json})
        self._conn._deliver(functools.partial(self._push, resynchronized))

    def _push(self, event: Event) -> None:
        if self._ended:
            return  # ended while the event was held (``Connection._deliver``)
        if event.watch != self._app_id:
            event = Event(event.kind, event.display, self._app_id or 0, dict(event.data, watch=self._app_id))
        self._queue.append(event)
        self._wakeup.set()
        self._conn._notify_ready()

    def _end(self, error: Optional[FrameRateError]) -> None:
        if self._ended:
            return
        self._ended = True
        self._error = error
        self._daemon_id = None
        self._wakeup.set()
