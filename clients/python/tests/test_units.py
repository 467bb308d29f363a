"""Unit tests without a daemon: error mapping, tick parsing (the socket rule: test_discovery.py)."""

from __future__ import annotations

import math

import pytest

import framerate
from framerate.errors import error_from_response


@pytest.mark.parametrize(
    "error, cls, status, code",
    [
        ({"code": 5, "message": "link 4 does not exist on this connection", "data": {"status": "NOT_FOUND"}},
         framerate.NotFound, "NOT_FOUND", 5),
        ({"code": 7, "message": "only root…", "data": {"status": "PERMISSION_DENIED"}},
         framerate.PermissionDenied, "PERMISSION_DENIED", 7),
        ({"code": 8, "message": "limit", "data": {"status": "RESOURCE_EXHAUSTED"}},
         framerate.ResourceExhausted, "RESOURCE_EXHAUSTED", 8),
        ({"code": 11, "message": "never sent", "data": {"status": "OUT_OF_RANGE"}},
         framerate.OutOfRange, "OUT_OF_RANGE", 11),
        ({"code": 14, "message": "framerated is shutting down", "data": {"status": "UNAVAILABLE"}},
         framerate.Unavailable, "UNAVAILABLE", 14),
        ({"code": -32602, "message": "invalid range", "data": {"status": "INVALID_ARGUMENT", "field": "range.minimum"}},
         framerate.InvalidArgument, "INVALID_ARGUMENT", -32602),
        ({"code": -32601, "message": "Method not found", "data": {"status": "UNIMPLEMENTED", "method": "x"}},
         framerate.Unimplemented, "UNIMPLEMENTED", -32601),
        ({"code": -32700, "message": "Parse error", "data": {"status": "INVALID_ARGUMENT", "detail": "…"}},
         framerate.InvalidArgument, "INVALID_ARGUMENT", -32700),
        ({"code": 99, "message": "new", "data": {"status": "SOMETHING_NEW"}}, framerate.Unknown, "SOMETHING_NEW", 99),
        ({"code": 5, "message": "no data"}, framerate.NotFound, "NOT_FOUND", 5),
    ],
)
def test_error_mapping(error, cls, status, code):
    mapped = error_from_response(error)
    assert type(mapped) is cls
    assert isinstance(mapped, framerate.FrameRateError)
    assert (mapped.status, mapped.code, mapped.message) == (status, code, error["message"])
    assert mapped.data["status"] == status


def test_invalid_argument_field():
    error = error_from_response({"code": -32602, "message": "m", "data": {"status": "INVALID_ARGUMENT", "field": "label"}})
    assert error.field == "label" and error.grpc_code == 3


def test_daemon_not_running_is_unavailable():
    error = framerate.DaemonNotRunning("/nowhere.sock")
    assert isinstance(error, framerate.Unavailable)
    assert error.path == "/nowhere.sock" and error.status == "UNAVAILABLE" and error.code == 14
    assert "framerated --socket /nowhere.sock" in error.message


def test_tick_from_params_ignores_unknown_fields():
    tick = framerate.Tick.from_params({
        "link": 1, "sequence": 2, "timestamp": 1133.098209716, "targetTimestamp": 1133.106543050,
        "duration": 0.008333333, "refreshRate": 120.0, "callbackRate": 120.0, "skipped": 0, "future": "x",
    })
    assert tick.link == 1 and tick.sequence == 2 and tick.skipped == 0
    assert math.isclose(tick.target_timestamp - tick.timestamp, 1 / 120, abs_tol=1e-6)
    assert math.isclose(tick.working_time_left(now=1133.1), 0.00654305, abs_tol=1e-9)


def test_skipped_intervals_rounds_half_away_from_zero():
    from framerate.aio import skipped_intervals

    assert skipped_intervals(10.0, 11.25, 2.0) == 2   # round(2.5) = 3, not banker's 2
    assert skipped_intervals(10.0, 12.25, 2.0) == 4   # round(4.5) = 5
    assert skipped_intervals(10.0, 11.5, 2.0) == 2
    assert skipped_intervals(10.0, 10.5, 2.0) == 1    # at least one
    assert skipped_intervals(10.0, 9.0, 60.0) == 1
    assert skipped_intervals(10.0, float("inf"), 60.0) == 1
    assert skipped_intervals(0.0, 1.0, 120.0) == 119


def test_link_info_reads_a_hidden_holder_as_none():
    """``pid``/``uid`` ``null`` (another user's link, for a viewer that may not see who
    holds it) is ``None``, not 0: uid 0 is root."""
    wire = {"link": 3, "range": {"minimum": 30.0, "maximum": 60.0, "preferred": 60.0}, "paused": False,
            "callbackRate": 60.0, "label": None, "highFrameRate": False, "pid": None, "uid": None,
            "command": None, "since": 12.5}
    hidden = framerate.LinkInfo.from_json(wire)
    assert (hidden.pid, hidden.uid, hidden.command, hidden.label) == (None, None, None, None)
    shown = framerate.LinkInfo.from_json(dict(wire, pid=0, uid=4294967295, command="python3"))
    assert (shown.pid, shown.uid, shown.command) == (0, 4294967295, "python3")  # unknown holder, as sent
