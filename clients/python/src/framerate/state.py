"""Typed ``Compositor/GetState`` results: :class:`CompositorState` > :class:`Display` > :class:`LinkInfo`.

Every object keeps the wire object it was read from in ``raw``, and indexing
it with a wire key (``state["displays"]``, ``display["caps"]``) returns that
raw value, so code written when :meth:`~framerate.Connection.state` returned a
``dict`` keeps working.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, Mapping, Optional, Tuple

__all__ = ["Caps", "FrameRateRange", "AwaitingFrame", "LinkInfo", "Display", "CompositorState"]


def _float(value: Any, default: float = 0.0) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _optional_float(value: Any) -> Optional[float]:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _optional_int(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _optional_str(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


class _RawAccess:
    """``obj["wireKey"]`` and ``obj.get("wireKey")`` read the wire object (compatibility with dict results)."""

    raw: Dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)


@dataclass(frozen=True)
class Caps(_RawAccess):
    """A display's caps (the CAPS object).

    Attributes:
        low_power_mode: Low Power Mode caps the display at 60 Hz.
        limit_frame_rate: the accessibility "Limit Frame Rate" setting, 60 Hz.
        thermal_state: ``"nominal"``, ``"fair"``, ``"serious"`` or ``"critical"``.
    """

    low_power_mode: bool
    limit_frame_rate: bool
    thermal_state: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, value: Any) -> "Caps":
        obj = _object(value)
        return cls(low_power_mode=obj.get("lowPowerMode") is True, limit_frame_rate=obj.get("limitFrameRate") is True,
                   thermal_state=str(obj.get("thermalState", "nominal")), raw=dict(obj))


@dataclass(frozen=True)
class FrameRateRange:
    """A ``CAFrameRateRange``, Hz; ``preferred`` 0 means no preference."""

    minimum: float
    maximum: float
    preferred: float

    @classmethod
    def from_json(cls, value: Any) -> "FrameRateRange":
        obj = _object(value)
        return cls(_float(obj.get("minimum")), _float(obj.get("maximum")), _float(obj.get("preferred")))


@dataclass(frozen=True)
class AwaitingFrame:
    """The tick whose frame the daemon waits for before it ticks a link again (the
    LINK object's ``awaitingFrame``): a link that answers its ticks (``frame_done`` or
    ``present``) gets no tick while its latest one is unanswered.

    Attributes:
        sequence: the unanswered tick, in the daemon's numbering.
        since: that tick's timestamp, seconds on ``CLOCK_MONOTONIC``.
        skipped: the link's intervals that passed without a tick meanwhile (at least 1).
    """

    sequence: int
    since: float
    skipped: int

    @classmethod
    def from_json(cls, value: Any) -> Optional["AwaitingFrame"]:
        """The value of an ``awaitingFrame`` field, or ``None`` for ``null`` (or anything
        that is not an object)."""
        if not isinstance(value, Mapping):
            return None
        return cls(sequence=_int(value.get("sequence")), since=_float(value.get("since")), skipped=_int(value.get("skipped")))


@dataclass(frozen=True)
class LinkInfo(_RawAccess):
    """A link as GetState lists it (the LINK object); any connection's, ids the daemon's.

    Attributes:
        link: the daemon's id for the link.
        range: as registered (before clamping).
        paused: whether it is paused.
        callback_rate: its tick rate at the refresh rate in force, Hz.
        label: its label, or ``None`` (none, or hidden from this viewer like ``pid``).
        high_frame_rate: whether it declared the high-frame-rate entitlement.
        pid, uid: the holder (``SO_PEERCRED``; 0 and 4294967295 when unknown), or
            ``None`` when the daemon hides it from this viewer (JSON ``null``: another
            user's link, seen by a client that is not root, the daemon's user or in the
            admin group). ``None`` is not uid 0 (root).
        command: the holder's ``/proc/PID/comm``, or ``None`` (unknown, or hidden).
        since: when it was registered, seconds on ``CLOCK_MONOTONIC`` (``None`` from older daemons).
        limited_by: what limits it (``"entitlement"``, ``"cap"``…), or ``None``.
        wanted, got: the rate it wanted and got when limited, Hz, or ``None``.
        timelines, preferred_frame_latency: its frame-timing settings (1 and 1 from older daemons).
        awaiting_frame: the tick it gets no ticks until its client answers, once an
            interval has passed without a tick for it (:class:`AwaitingFrame`), else ``None``.
    """

    link: int
    range: FrameRateRange
    paused: bool
    callback_rate: float
    label: Optional[str]
    high_frame_rate: bool
    pid: Optional[int]
    uid: Optional[int]
    command: Optional[str]
    since: Optional[float]
    limited_by: Optional[str]
    wanted: Optional[float]
    got: Optional[float]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    timelines: int = 1
    preferred_frame_latency: int = 1
    awaiting_frame: Optional[AwaitingFrame] = None

    @classmethod
    def from_json(cls, value: Any) -> "LinkInfo":
        obj = _object(value)
        return cls(
            link=_int(obj.get("link")), range=FrameRateRange.from_json(obj.get("range")),
            paused=obj.get("paused") is True, callback_rate=_float(obj.get("callbackRate")),
            label=_optional_str(obj.get("label")), high_frame_rate=obj.get("highFrameRate") is True,
            pid=_optional_int(obj.get("pid")), uid=_optional_int(obj.get("uid")), command=_optional_str(obj.get("command")),
            since=_optional_float(obj.get("since")), limited_by=_optional_str(obj.get("limitedBy")),
            wanted=_optional_float(obj.get("wanted")), got=_optional_float(obj.get("got")), raw=dict(obj),
            timelines=_int(obj.get("timelines", 1)), preferred_frame_latency=_int(obj.get("preferredFrameLatency", 1)),
            awaiting_frame=AwaitingFrame.from_json(obj.get("awaitingFrame")),
        )


@dataclass(frozen=True)
class Display(_RawAccess):
    """One display (the DISPLAY object).

    Attributes:
        id: the display id.
        profile: its profile (``promotion-phone``, ``fixed-60``, ``custom:…``).
        supported_rates: its rates, Hz, highest first.
        refresh_rate: the rate in force, Hz.
        reason: why, in a sentence (and where it is moving to, when a change is pending).
        caps: the caps in force.
        links: its links, in registration order.
        decision: the latest arbitration (the DECISION object, as sent), or ``None``.
        panel_rate: the panel's rate in force, Hz: ``refresh_rate`` unless a link's
            ``content_velocity`` lowers the panel (``None`` from older daemons).
        panel_decision: the panel arbitration (a DECISION object) while content velocity
            is in play, else ``None``.
    """

    id: int
    profile: str
    supported_rates: Tuple[float, ...]
    refresh_rate: float
    reason: str
    caps: Caps
    links: Tuple[LinkInfo, ...]
    decision: Optional[Dict[str, Any]]
    panel_rate: Optional[float] = None
    panel_decision: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, value: Any) -> "Display":
        obj = _object(value)
        rates = obj.get("supportedRates")
        links = obj.get("links")
        decision = obj.get("decision")
        panel_decision = obj.get("panelDecision")
        return cls(
            id=_int(obj.get("id")), profile=str(obj.get("profile", "")),
            supported_rates=tuple(_float(rate) for rate in rates) if isinstance(rates, list) else (),
            refresh_rate=_float(obj.get("refreshRate")), reason=str(obj.get("reason", "")),
            caps=Caps.from_json(obj.get("caps")),
            links=tuple(LinkInfo.from_json(link) for link in links) if isinstance(links, list) else (),
            decision=dict(decision) if isinstance(decision, Mapping) else None,
            panel_rate=_optional_float(obj.get("panelRate")),
            panel_decision=dict(panel_decision) if isinstance(panel_decision, Mapping) else None, raw=dict(obj),
        )


@dataclass(frozen=True)
class CompositorState(_RawAccess):
    """A ``Compositor/GetState`` result: every display, default display first."""

    displays: Tuple[Display, ...]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, value: Any) -> "CompositorState":
        obj = _object(value)
        displays = obj.get("displays")
        return cls(displays=tuple(Display.from_json(d) for d in displays) if isinstance(displays, list) else (),
                   raw=dict(obj))

    def display(self, display_id: int) -> Optional[Display]:
        """The display with id ``display_id``, or ``None``."""
        return next((d for d in self.displays if d.id == display_id), None)

    def links(self) -> Iterator[LinkInfo]:
        """Every link of every display."""
        for display in self.displays:
            yield from display.links
