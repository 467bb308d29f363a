"""framerate: the Python client for framerated, the Linux frame-rate hint broker.

Two APIs over the same connection logic:

- asyncio (:mod:`framerate.aio`)::

      async with framerate.connect() as conn:
          link = await conn.register(80, 120, 120, high_frame_rate=True)
          async for tick in link:
              budget = tick.target_timestamp - time.monotonic()

- blocking, for scripts (:mod:`framerate.blocking`)::

      with framerate.connect_blocking() as conn:
          link = conn.register(80, 120, 120, high_frame_rate=True)
          for tick in link:
              ...

Every instant (``Tick.timestamp``, ``Tick.target_timestamp``) is in seconds on
``CLOCK_MONOTONIC``, the clock :func:`time.monotonic` reads on Linux, so
``tick.target_timestamp - time.monotonic()`` is the working time left for a frame.

The socket is found the way framectl finds it (:func:`find_socket`) unless a
path is given, and the process answering on it must be root, the ``framerated``
service user or this process's own user (:class:`UntrustedDaemon` otherwise).
Errors are :class:`FrameRateError` subclasses named after the
gRPC status the daemon reports (``data.status``).

Reconnect follows docs/protocol.md ("Reconnecting"), like the Swift and C
clients: backoff 10 ms doubling to 1 s, ±10 % jitter (:class:`ReconnectPolicy`);
calls pending at the drop or made during the outage fail at once with
:class:`ConnectionLost`; links and watches are registered again.
"""

from . import aio, blocking
from .aio import Connection, DisplayLink, Watch, connect
from .blocking import connect as connect_blocking
from .errors import (
    Aborted,
    AlreadyExists,
    Cancelled,
    ConnectionClosed,
    ConnectionLost,
    DaemonNotRunning,
    DataLoss,
    DeadlineExceeded,
    FailedPrecondition,
    FrameRateError,
    Internal,
    InvalidArgument,
    LinkEnded,
    NotFound,
    OutOfRange,
    PermissionDenied,
    ProtocolError,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
    Unimplemented,
    Unknown,
    UntrustedDaemon,
)
from .reconnect import ReconnectPolicy
from .state import AwaitingFrame, Caps, CompositorState, Display, FrameRateRange, LinkInfo
from .types import SYSTEM_SOCKET_PATH, Event, FrameTimeline, LinkStatus, Presented, SocketChoice, Tick, find_socket, socket_path

__version__ = "0.2.0"

__all__ = [
    "aio",
    "blocking",
    "connect",
    "connect_blocking",
    "Connection",
    "DisplayLink",
    "Watch",
    "Tick",
    "FrameTimeline",
    "Presented",
    "LinkStatus",
    "Event",
    "CompositorState",
    "Display",
    "LinkInfo",
    "AwaitingFrame",
    "Caps",
    "FrameRateRange",
    "ReconnectPolicy",
    "socket_path",
    "find_socket",
    "SocketChoice",
    "SYSTEM_SOCKET_PATH",
    "FrameRateError",
    "Aborted",
    "AlreadyExists",
    "Cancelled",
    "ConnectionClosed",
    "ConnectionLost",
    "DaemonNotRunning",
    "DataLoss",
    "DeadlineExceeded",
    "FailedPrecondition",
    "Internal",
    "InvalidArgument",
    "LinkEnded",
    "NotFound",
    "OutOfRange",
    "PermissionDenied",
    "ProtocolError",
    "ResourceExhausted",
    "Unauthenticated",
    "Unavailable",
    "Unimplemented",
    "Unknown",
    "UntrustedDaemon",
]
