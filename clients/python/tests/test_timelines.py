"""Frame timelines, frame latency and Present's vsync_id against a real framerated."""

from __future__ import annotations

import math

import pytest

import framerate


def test_ticks_carry_timelines_and_target_presentation_timestamp(daemon):
    with framerate.connect_blocking(daemon.socket_path) as conn:
        link = conn.register(120, 120, 120, label="py-timelines", high_frame_rate=True, timelines=3, preferred_frame_latency=2)
        tick = link.next_tick(timeout=5)
        while tick.refresh_rate != 120:
            link.frame_done(tick.sequence)
            tick = link.next_tick(timeout=5)
        assert 1 <= len(tick.timelines) <= 3
        assert all(isinstance(entry, framerate.FrameTimeline) for entry in tick.timelines)
        assert math.isclose(tick.target_presentation_timestamp, tick.timestamp + 2 / tick.callback_rate, abs_tol=2e-9)
        for entry in tick.timelines:
            assert math.isclose(entry.presentation_time - entry.deadline, 1 / 120, abs_tol=2e-9)
        if len(tick.timelines) == 3:
            assert math.isclose(tick.timelines[0].deadline, tick.target_timestamp, abs_tol=2e-9)
        aim = tick.timelines[-1]
        link.present(tick.sequence, vsync_id=aim.vsync_id)
        frames = []
        for _ in range(60):
            later = link.next_tick(timeout=5)
            link.frame_done(later.sequence)
            frames += [frame for frame in link.presented() if frame.sequence == tick.sequence]
            if frames:
                break
        assert frames and math.isclose(frames[0].expected_time, aim.presentation_time, abs_tol=2e-9)
        assert frames[0].presented_time >= aim.presentation_time - 2e-9
        state = conn.state()
        entry = next(l for d in state["displays"] for l in d["links"] if l["label"] == "py-timelines")
        assert entry["timelines"] == 3 and entry["preferredFrameLatency"] == 2
        link.update(timelines=1, preferred_frame_latency=1)
        plain = link.next_tick(timeout=5)
        while plain.timelines:
            link.frame_done(plain.sequence)
            plain = link.next_tick(timeout=5)
        assert plain.target_presentation_timestamp == plain.target_timestamp


@pytest.mark.parametrize("field, value, bound", [("timelines", 8, "1...7"), ("preferred_frame_latency", 3, "1...2")])
def test_out_of_range_frame_timing_is_refused(daemon, field, value, bound):
    with framerate.connect_blocking(daemon.socket_path) as conn:
        with pytest.raises(framerate.InvalidArgument) as raised:
            conn.register(60, 60, 60, **{field: value})
        assert bound in str(raised.value)
