"""Exceptions, one per gRPC status the daemon reports in ``error.data.status``.

Every error the daemon sends carries ``data.status``, a gRPC status name; the
client raises the subclass of :class:`FrameRateError` for that name. Branch on
the class (or ``.status``), never on ``.message``, which is a sentence for people.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Type

from .types import SYSTEM_SOCKET_PATH, SocketChoice

__all__ = [
    "FrameRateError",
    "Cancelled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
    "DaemonNotRunning",
    "UntrustedDaemon",
    "ConnectionLost",
    "ConnectionClosed",
    "ProtocolError",
    "error_from_response",
    "error_from_status",
]

#: gRPC status names and their numbers.
GRPC_CODES: Dict[str, int] = {
    "OK": 0,
    "CANCELLED": 1,
    "UNKNOWN": 2,
    "INVALID_ARGUMENT": 3,
    "DEADLINE_EXCEEDED": 4,
    "NOT_FOUND": 5,
    "ALREADY_EXISTS": 6,
    "PERMISSION_DENIED": 7,
    "RESOURCE_EXHAUSTED": 8,
    "FAILED_PRECONDITION": 9,
    "ABORTED": 10,
    "OUT_OF_RANGE": 11,
    "UNIMPLEMENTED": 12,
    "INTERNAL": 13,
    "UNAVAILABLE": 14,
    "DATA_LOSS": 15,
    "UNAUTHENTICATED": 16,
}


class FrameRateError(Exception):
    """An error from framerated or from talking to it.

    Attributes:
        status: the gRPC status name (``data.status``), e.g. ``"NOT_FOUND"``.
        code: the JSON-RPC error ``code`` as sent: the gRPC code number (``5``)
            for application errors, or a JSON-RPC code (``-32602``) for
            envelope and parameter errors.
        message: the daemon's sentence for people.
        data: the error's ``data`` object (``status``, and maybe ``field``,
            ``detail``, ``method``).
    """

    status: str = "UNKNOWN"
    #: What the daemon said before it closed the connection (e.g. its connection
    #: limit), for a :class:`ConnectionLost` it explains; else ``None``.
    cause: Optional["FrameRateError"] = None

    def __init__(
        self,
        message: str,
        *,
        status: Optional[str] = None,
        code: Optional[int] = None,
        data: Optional[Mapping[str, Any]] = None,
    ) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status
        self.message = message
        self.code = code if code is not None else GRPC_CODES.get(self.status, 2)
        self.data: Dict[str, Any] = dict(data) if data else {"status": self.status}

    @property
    def grpc_code(self) -> int:
        """The gRPC status number of :attr:`status` (``5`` for ``NOT_FOUND``)."""
        return GRPC_CODES.get(self.status, 2)

    @property
    def field(self) -> Optional[str]:
        """The offending parameter (``data.field``, e.g. ``"range.minimum"``), if named."""
        value = self.data.get("field")
        return value if isinstance(value, str) else None

    def __str__(self) -> str:
        return f"{self.message} ({self.status})"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status={self.status!r}, code={self.code!r}, data={self.data!r})"


class Cancelled(FrameRateError):
    status = "CANCELLED"


class Unknown(FrameRateError):
    status = "UNKNOWN"


class InvalidArgument(FrameRateError):
    """Bad parameters (``-32602``, :attr:`field` names the field) or a bad envelope."""

    status = "INVALID_ARGUMENT"


class DeadlineExceeded(FrameRateError):
    status = "DEADLINE_EXCEEDED"


class NotFound(FrameRateError):
    """The link, watch, display or service does not exist *on this connection*."""

    status = "NOT_FOUND"


class AlreadyExists(FrameRateError):
    status = "ALREADY_EXISTS"


class PermissionDenied(FrameRateError):
    """SetCaps by a peer that is not root, the daemon's user or an admin-group member."""

    status = "PERMISSION_DENIED"


class ResourceExhausted(FrameRateError):
    """A limit: links per connection, connections, batch size."""

    status = "RESOURCE_EXHAUSTED"


class FailedPrecondition(FrameRateError):
    status = "FAILED_PRECONDITION"


class Aborted(FrameRateError):
    status = "ABORTED"


class OutOfRange(FrameRateError):
    """FrameDone for a sequence the link was never sent."""

    status = "OUT_OF_RANGE"


class Unimplemented(FrameRateError):
    """Unknown method."""

    status = "UNIMPLEMENTED"


class Internal(FrameRateError):
    status = "INTERNAL"


class Unavailable(FrameRateError):
    """The daemon is shutting down, is not running, or the connection was lost."""

    status = "UNAVAILABLE"


class DataLoss(FrameRateError):
    status = "DATA_LOSS"


class Unauthenticated(FrameRateError):
    status = "UNAUTHENTICATED"


class DaemonNotRunning(Unavailable):
    """Nothing listens on the socket chosen.

    Attributes:
        path: the socket path that was tried.
        paths_tried: every path looked at, in order (the per-user path that held
            no socket, then the system path, when the default rule chose the system daemon).
    """

    def __init__(self, path: str, reason: Optional[str] = None, *, choice: Optional[SocketChoice] = None) -> None:
        choice = choice if choice is not None and choice.path == path else SocketChoice(path, "explicit")
        super().__init__(_not_running_message(choice, reason))
        self.path = path
        self.paths_tried = choice.paths_tried


def _not_running_message(choice: SocketChoice, reason: Optional[str]) -> str:
    """Which paths were tried, and the advice that fits them (the same wording as the Swift client)."""
    path = choice.path
    why = f" ({reason})" if reason else ""
    if choice.source == "explicit":
        return (f"framerated is not running: nothing is listening on {path}{why} (the socket asked for). "
                f"Start a daemon there with `framerated --socket {path}`, or leave the path out to find the default daemon.")
    if choice.source == "environment":
        return (f"framerated is not running: nothing is listening on {path}{why} (from $FRAMERATED_SOCKET). "
                f"Start a daemon there with `framerated --socket {path}`, or unset FRAMERATED_SOCKET to find the default daemon.")
    if choice.source == "per-user":
        return (f"framerated is not running: nothing is listening on {path}{why}, your per-user daemon's socket "
                "($XDG_RUNTIME_DIR/framerated.sock; the system daemon is not tried while that socket exists). "
                f"Start your daemon with `framerated`, or remove the stale socket to use the system daemon at {SYSTEM_SOCKET_PATH}.")
    if choice.per_user_candidate:
        return (f"framerated is not running: tried {choice.per_user_candidate} (no socket there: no per-user daemon) "
                f"and {path}{why} (nothing listening: no system daemon). "
                "Start the system daemon with `systemctl start framerated.socket`, or your own with `framerated`, "
                "or name a socket with the path argument or $FRAMERATED_SOCKET.")
    return (f"framerated is not running: tried {path}{why} (nothing listening: no system daemon; "
            "XDG_RUNTIME_DIR is not set, so no per-user daemon was looked for). "
            "Start the system daemon with `systemctl start framerated.socket`, "
            "or your own with `framerated --socket PATH` and name it with the path argument or $FRAMERATED_SOCKET.")


class UntrustedDaemon(PermissionDenied):
    """The process listening on the socket runs as a user the client does not
    trust: not root, not the ``framerated`` service user, not this process's
    user. It may be impersonating the daemon, so the client refused to talk to it.

    Attributes:
        path: the socket path.
        uid: the listening process's uid (``SO_PEERCRED``).
    """

    def __init__(self, path: str, uid: int) -> None:
        super().__init__(
            f"refusing the daemon at {path}: the process listening there runs as uid {uid}, "
            "which is neither root, the framerated service user nor you, so it may be impersonating framerated. "
            "Check who owns that socket, and name the real daemon's socket with the path argument or $FRAMERATED_SOCKET."
        )
        self.path = path
        self.uid = uid


class ConnectionLost(Unavailable):
    """The connection to the daemon dropped: a call whose answer was pending, or
    one made while the connection reconnects, fails with this at once (the
    reconnect rule of docs/protocol.md); call again once it is back."""


class ConnectionClosed(Cancelled):
    """The connection was closed by :meth:`close`; no more calls can be made on it."""


class LinkEnded(Cancelled):
    """:meth:`~framerate.DisplayLink.next_tick` on a link that ended cleanly: it
    was invalidated, or its connection was closed by the application."""


class ProtocolError(Internal):
    """The daemon sent a line this client cannot read."""


_BY_STATUS: Dict[str, Type[FrameRateError]] = {
    cls.status: cls
    for cls in (
        Cancelled,
        Unknown,
        InvalidArgument,
        DeadlineExceeded,
        NotFound,
        AlreadyExists,
        PermissionDenied,
        ResourceExhausted,
        FailedPrecondition,
        Aborted,
        OutOfRange,
        Unimplemented,
        Internal,
        Unavailable,
        DataLoss,
        Unauthenticated,
    )
}


def error_from_status(status: Any, message: str, code: Optional[int] = None, data: Optional[Mapping[str, Any]] = None) -> FrameRateError:
    """The exception for gRPC status name ``status`` (unknown names give :class:`Unknown`)."""
    name = status if isinstance(status, str) else "UNKNOWN"
    cls = _BY_STATUS.get(name, Unknown)
    return cls(message, status=name, code=code, data=data)


def error_from_response(error: Any) -> FrameRateError:
    """The exception for a JSON-RPC ``error`` object as the daemon sends it."""
    if not isinstance(error, dict):
        return ProtocolError(f"malformed error object: {error!r}")
    data = error.get("data")
    data = data if isinstance(data, dict) else {}
    code = error.get("code")
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    message = error.get("message")
    message = message if isinstance(message, str) else "(no message)"
    status = data.get("status")
    if not isinstance(status, str):
        # Only for a daemon that does not send data.status: derive it from the code.
        status = {-32700: "INVALID_ARGUMENT", -32600: "INVALID_ARGUMENT", -32601: "UNIMPLEMENTED",
                  -32602: "INVALID_ARGUMENT", -32603: "INTERNAL"}.get(code or 0)
        if status is None:
            status = next((name for name, number in GRPC_CODES.items() if number == code), "UNKNOWN")
        data = dict(data, status=status)
    return error_from_status(status, message, code=code, data=data)
