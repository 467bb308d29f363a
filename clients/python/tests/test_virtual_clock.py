"""Testing frame-pacing code with a virtual-clock daemon (``framerated --clock virtual``).

The Python client is used unchanged: the daemon's clock jumps to the next vsync as soon
as the animation answers each tick, so 60 virtual seconds of a 60 Hz animation run in
a fraction of that on the wall, and every count is exact, the same on every run.
"""

from __future__ import annotations

import math
import time

import framerate

EPOCH = 1000.0
PERIOD = 1 / 60


def test_an_animation_has_an_exact_frame_count_and_hitch_time_over_60_virtual_seconds(make_daemon):
    daemon = make_daemon("--clock", "virtual", "--display", "fixed-60")
    started = time.monotonic()
    with framerate.connect_blocking(daemon.socket_path) as conn:
        link = conn.register(60, 60, 60, label="py-virtual-animation")
        # The animation: every frame is presented on its tick, except that each 60th frame
        # is slow. Its frame is ready half a period after its target (Present "at"), so it
        # shows one vsync late, and the next tick is answered with FrameDone only: the
        # animation was still busy and skips that frame.
        ticks = slow = skipped_frames = 0
        busy = False
        last = None
        frames = []
        while True:
            tick = link.next_tick(timeout=10)
            frames += link.presented()  # kept for a few ticks only: collect as they come
            if tick.timestamp >= EPOCH + 60:
                break
            assert last is None or tick.sequence == last.sequence + 1 and tick.skipped == 0
            assert last is None or math.isclose(tick.timestamp - last.timestamp, PERIOD, abs_tol=2e-9)
            last = tick
            ticks += 1
            if busy:
                busy = False
                skipped_frames += 1
                link.frame_done(tick.sequence)
            elif tick.sequence % 60 == 30:
                slow += 1
                busy = True
                link.present(tick.sequence, at=tick.target_timestamp + PERIOD / 2)
            else:
                link.present(tick.sequence)
        state = conn.state()  # a round trip: every Presented sent before it has been read
        frames += link.presented()
    wall = time.monotonic() - started

    # Ticks at the vsyncs epoch + k/60 for k = 1...3600 (the grid is in whole nanoseconds,
    # so the 3600th lands just before epoch + 60 s); 60 slow frames, 60 skipped.
    print(f"first tick {EPOCH + PERIOD:.9f}, last {last.timestamp:.9f}")
    assert ticks == 3600 and last.sequence == 3600
    assert last.timestamp < EPOCH + 60 and math.isclose(last.timestamp, EPOCH + 60, abs_tol=2e-9)
    assert slow == 60 and skipped_frames == 60
    assert len(frames) == ticks - skipped_frames == 3540
    late = [frame for frame in frames if frame.hitch > 0]
    assert len(late) == 60 and all(not frame.dropped for frame in frames)
    assert all(math.isclose(frame.hitch, PERIOD, abs_tol=2e-9) for frame in late)
    assert math.isclose(sum(frame.hitch for frame in frames), 1.0, abs_tol=1e-6)
    assert state["clock"] == "virtual" and math.isclose(state["now"], last.timestamp + PERIOD, abs_tol=2e-9)
    hitches = next(l["hitches"] for d in state["displays"] for l in d["links"])
    assert hitches["frames"] == 3540 and hitches["late"] == 60 and hitches["dropped"] == 0
    assert math.isclose(hitches["timeMs"], 1000.0, abs_tol=1e-3)
    # 60 virtual seconds; the wall time is reported, bounded only loosely (a shared machine).
    print(f"60 virtual seconds (3600 ticks) in {wall:.2f} wall seconds")
    assert wall < 30
