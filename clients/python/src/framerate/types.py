"""Typed values: ticks, link status, compositor events, and the socket-path rule."""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

__all__ = ["Tick", "Presented", "LinkStatus", "Event", "socket_path", "find_socket", "SocketChoice", "SYSTEM_SOCKET_PATH"]

#: The system daemon's socket, where ``framerated.socket`` listens.
SYSTEM_SOCKET_PATH = "/run/framerated/framerated.sock"

#: The per-user daemon's socket name inside ``$XDG_RUNTIME_DIR``.
PER_USER_SOCKET_NAME = "framerated.sock"


@dataclass(frozen=True)
class SocketChoice:
    """The socket a client connects to, and how it was chosen.

    Attributes:
        path: the socket to connect to.
        source: ``"explicit"`` (a path the program named), ``"environment"``
            (``$FRAMERATED_SOCKET``), ``"per-user"`` (``$XDG_RUNTIME_DIR/framerated.sock``,
            which exists) or ``"system"`` (``/run/framerated/framerated.sock``).
        per_user_candidate: for ``"system"``, the per-user path looked at first
            that held no socket (``None`` without ``XDG_RUNTIME_DIR``).
    """

    path: str
    source: str
    per_user_candidate: Optional[str] = None

    @property
    def paths_tried(self) -> List[str]:
        """Every path looked at, in order."""
        return [self.per_user_candidate, self.path] if self.per_user_candidate else [self.path]


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


def find_socket(
    explicit: Optional[str] = None,
    environ: Optional[Mapping[str, str]] = None,
    is_socket: Optional[Callable[[str], bool]] = None,
) -> SocketChoice:
    """The daemon's socket, by the rule framectl and every client use
    (docs/protocol.md, "Finding the daemon"), the same for root:

    1. ``explicit``, if given and non-empty;
    2. else ``$FRAMERATED_SOCKET``, if non-empty;
    3. else ``$XDG_RUNTIME_DIR/framerated.sock`` (the per-user daemon) when a
       socket exists there;
    4. else ``/run/framerated/framerated.sock`` (the system daemon).

    ``is_socket`` tells whether a socket exists at a path (default: ``os.stat``).
    """
    if explicit:
        return SocketChoice(explicit, "explicit")
    env = os.environ if environ is None else environ
    from_env = env.get("FRAMERATED_SOCKET")
    if from_env:
        return SocketChoice(from_env, "environment")
    runtime = env.get("XDG_RUNTIME_DIR")
    if not runtime:
        return SocketChoice(SYSTEM_SOCKET_PATH, "system")
    per_user = runtime.rstrip("/") + "/" + PER_USER_SOCKET_NAME
    if (is_socket or _is_socket)(per_user):
        return SocketChoice(per_user, "per-user")
    return SocketChoice(SYSTEM_SOCKET_PATH, "system", per_user)


def socket_path(explicit: Optional[str] = None, environ: Optional[Mapping[str, str]] = None) -> str:
    """The path :func:`find_socket` chooses."""
    return find_socket(explicit, environ).path


@dataclass(frozen=True)
class FrameTimeline:
    """One entry of a tick's ``timelines``: a future frame the application may aim for
    (Android's ``FrameTimeline``). Times are seconds on ``CLOCK_MONOTONIC``.

    Attributes:
        vsync_id: the display's vsync index of ``presentation_time``; pass it to
            :meth:`DisplayLink.present <framerate.DisplayLink.present>` as ``vsync_id``
            to aim a frame at this entry.
        deadline: commit the frame by then.
        presentation_time: the vsync where a frame committed by ``deadline`` is shown.
    """

    vsync_id: int
    deadline: float
    presentation_time: float

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> "FrameTimeline":
        return cls(int(entry["vsyncId"]), float(entry["deadline"]), float(entry["presentationTime"]))


@dataclass(frozen=True)
class Tick:
    """One tick of a display link (``framerate.v1.DisplayLink/Tick``).

    Instants are seconds on ``CLOCK_MONOTONIC``, the clock :func:`time.monotonic`
    reads on Linux, so ``target_timestamp - time.monotonic()`` is the working
    time left for this frame.

    Attributes:
        link: the link's id, :attr:`DisplayLink.id <framerate.DisplayLink.id>`
            (kept across reconnects, while the daemon's own id may change).
        sequence: the link's interval number. ``sequence == previous.sequence +
            skipped + 1`` holds for every tick the application receives, across
            reconnects too (the client renumbers a re-registered link's ticks to
            continue the sequence).
        timestamp: the vsync that starts this interval (``CADisplayLink.timestamp``).
        target_timestamp: the deadline for this frame (``CADisplayLink.targetTimestamp``).
        duration: the display's refresh period, ``1 / refresh_rate`` (``CADisplayLink.duration``).
        refresh_rate: the display's (panel's) rate in force, Hz; below the grid rate while a
            link's ``content_velocity`` lowers the panel.
        callback_rate: this link's tick rate, Hz (``refresh_rate / n``, except that it may
            exceed ``refresh_rate`` while content velocity lowers the panel).
        boosted: whether the link is boosted (``DisplayLink/Boost``) at this tick.
        target_presentation_timestamp: the vsync where a frame started at this tick
            and finished by ``target_timestamp`` is shown,
            ``timestamp + preferred_frame_latency / callback_rate``
            (``CAMetalDisplayLink.Update.targetPresentationTimestamp``); ``None`` only
            from a daemon older than the field.
        timelines: the link's next frames, earliest first, when it was registered
            with ``timelines`` > 1 (empty otherwise).
        skipped: intervals of this link that passed without a tick the
            application received: the daemon's skips, ticks this client dropped
            because the application fell behind, and, on the first tick after a
            reconnect, ``max(1, round((timestamp - last.timestamp) * callback_rate) - 1)``
            (rounding half away from zero; 0 if the link was paused meanwhile).
    """

    link: int
    sequence: int
    timestamp: float
    target_timestamp: float
    duration: float
    refresh_rate: float
    callback_rate: float
    skipped: int
    boosted: bool = False
    target_presentation_timestamp: Optional[float] = None
    timelines: Tuple[FrameTimeline, ...] = ()

    def working_time_left(self, now: Optional[float] = None) -> float:
        """Seconds left to finish this frame: ``target_timestamp - now``; ``now``
        defaults to :func:`time.monotonic` (``CLOCK_MONOTONIC``). Negative once
        the deadline has passed."""
        return self.target_timestamp - (time.monotonic() if now is None else now)

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "Tick":
        """A tick from a Tick notification's ``params`` (unknown fields are ignored)."""
        return cls(
            link=int(params["link"]),
            sequence=int(params["sequence"]),
            timestamp=float(params["timestamp"]),
            target_timestamp=float(params["targetTimestamp"]),
            duration=float(params["duration"]),
            refresh_rate=float(params["refreshRate"]),
            callback_rate=float(params["callbackRate"]),
            skipped=int(params.get("skipped", 0)),
            boosted=params.get("boosted") is True,
            target_presentation_timestamp=(float(params["targetPresentationTimestamp"])
                                           if "targetPresentationTimestamp" in params else None),
            timelines=tuple(FrameTimeline.from_json(entry) for entry in params.get("timelines", ())[:7]),
        )


@dataclass(frozen=True)
class LinkStatus:
    """A Register or Update result: the rate the display is moving to.

    Attributes:
        link: the link's id (:attr:`DisplayLink.id <framerate.DisplayLink.id>`).
        refresh_rate: the refresh rate arbitration chose for the display, Hz.
        callback_rate: this link's tick rate at that refresh rate, Hz.
        display: the display id (Register only; ``None`` for Update).
    """

    link: int
    refresh_rate: float
    callback_rate: float
    display: Optional[int] = None

    @classmethod
    def from_result(cls, result: Mapping[str, Any]) -> "LinkStatus":
        display = result.get("display")
        return cls(
            link=int(result["link"]),
            refresh_rate=float(result["refreshRate"]),
            callback_rate=float(result["callbackRate"]),
            display=int(display) if display is not None else None,
        )


@dataclass(frozen=True)
class Event:
    """One compositor change (``framerate.v1.Compositor/Event``).

    ``kind`` is ``refreshRateChanged``, ``linkAdded``, ``linkUpdated``,
    ``linkRemoved``, ``capsChanged`` (ignore kinds you do not know), or
    ``resynchronized``: a client-made event after a reconnect, whose
    ``data["state"]`` is the new daemon's full GetState result. Link ids inside
    events are the daemon's. ``data`` holds every field of
    the notification's params.
    """

    kind: str
    display: Optional[int]
    watch: int
    data: Dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        """A field of the event (``"from"``, ``"to"``, ``"reason"``, ``"link"``, ``"caps"``…)."""
        return self.data.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "Event":
        display = params.get("display")
        return cls(
            kind=str(params.get("kind", "")),
            display=int(display) if isinstance(display, int) else None,
            watch=int(params.get("watch", 0)),
            data=dict(params),
        )


@dataclass(frozen=True)
class Presented:
    """What became of one presented frame (``framerate.v1.DisplayLink/Presented``).

    Attributes:
        link: the link's id, :attr:`DisplayLink.id <framerate.DisplayLink.id>`.
        sequence: the tick whose frame it was (the link's tick numbering).
        presented_time: the vsync that showed it, seconds on ``CLOCK_MONOTONIC``; 0 if dropped.
        expected_time: when it should have been shown, seconds on ``CLOCK_MONOTONIC``: the
            tick's ``target_presentation_timestamp`` (its ``target_timestamp`` at frame latency
            1), or, when the ``present`` named a ``vsync_id``, that timeline entry's
            ``presentation_time``.
        hitch: ``max(0, presented_time - expected_time)``, seconds; 0 if dropped.
        dropped: a newer ``present`` replaced it before a vsync showed it.
    """

    link: int
    sequence: int
    presented_time: float
    expected_time: float
    hitch: float
    dropped: bool

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> "Presented":
        """A value from a Presented notification's ``params`` (unknown fields are ignored)."""
        return cls(
            link=int(params["link"]),
            sequence=int(params["sequence"]),
            presented_time=float(params["presentedTime"]),
            expected_time=float(params["expectedTime"]),
            hitch=float(params["hitch"]),
            dropped=bool(params.get("dropped", False)),
        )
