"""Boosts and adaptive links against a real framerated, asyncio and blocking."""

from __future__ import annotations

import asyncio
import time

import pytest

import framerate


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def test_boost_raises_the_rate_marks_ticks_and_expires(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(10, 120, 60, high_frame_rate=True)
            assert link.status.refresh_rate == 60.0
            before = time.monotonic()
            status = await link.boost(0.3)
            assert status.refresh_rate == 120.0 and status.callback_rate == 120.0
            assert before + 0.3 - 0.05 <= link.boosted_until <= time.monotonic() + 0.3 + 0.05
            ticks = []
            async for tick in link:
                ticks.append(tick)
                if tick.timestamp > link.boosted_until + 0.1:
                    break
            boosted = [t for t in ticks if t.boosted]
            assert boosted and all(t.callback_rate == 120.0 for t in boosted)
            # Ticks already queued before the boost took effect are unboosted; between the
            # first and the last boosted tick every tick is boosted; after it, none is.
            first, last = ticks.index(boosted[0]), ticks.index(boosted[-1])
            assert all(t.boosted for t in ticks[first:last + 1])
            after = ticks[last + 1:]
            assert after and all(not t.boosted and t.callback_rate == 60.0 for t in after)
            assert all(t.timestamp >= link.boosted_until - 1e-6 for t in after)

    run(main())


def test_boost_validates_before_sending(daemon):
    with framerate.connect_blocking(daemon.socket_path) as conn:
        link = conn.register(10, 120, 60, high_frame_rate=True)
        for bad in (0, -1, 5.5, float("nan")):
            with pytest.raises(ValueError):
                link.boost(bad)
        with pytest.raises(ValueError):
            link.boost(1, minimum=80)
        status = link.boost(1, 80, 80, 80)
        assert status.refresh_rate == 80.0
        assert link.boosted_until is not None


def test_adaptive_link_steps_down_when_frames_overrun(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(120, 120, 120, high_frame_rate=True, adaptive=True)
            assert link.adaptive
            deadline = time.monotonic() + 5
            async for tick in link:
                await asyncio.sleep(0.012)  # a 12 ms frame: late at 120 Hz, fits 60 Hz
                await link.frame_done(tick.sequence)
                if tick.callback_rate < 120.0 or time.monotonic() > deadline:
                    break
            state = await conn.state()
            limited = state["displays"][0]["decision"]["limited"]
            assert limited and limited[0]["by"] == "overrun" and limited[0]["wanted"] == 120.0
            assert limited[0]["got"] in (60.0, 40.0, 30.0)

    run(main())


def test_content_velocity_lowers_the_panel_while_callbacks_stay(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(120, 120, 120, high_frame_rate=True)
            deadline = time.monotonic() + 0.6
            ticks = []
            async for tick in link:
                ticks.append(tick)
                await link.frame_done(tick.sequence, content_velocity=200)
                if time.monotonic() > deadline:
                    break
            state = await conn.state()
            display = state.displays[0]
            assert display.refresh_rate == 120.0 and display.panel_rate == 80.0
            assert display.panel_decision is not None
            limit = display.panel_decision["limited"][0]
            assert limit["by"] == "velocity" and limit["contentVelocity"] == 200.0 and limit["got"] == 80.0
            assert all(t.callback_rate == 120.0 for t in ticks)
            # After the 250 ms dwell the ticks carry the panel's rate (callbacks still 120 Hz).
            assert any(t.refresh_rate == 80.0 for t in ticks)
            for bad in (-1, float("nan"), float("inf")):
                with pytest.raises(ValueError):
                    await link.frame_done(ticks[-1].sequence, content_velocity=bad)
                with pytest.raises(ValueError):
                    await link.present(ticks[-1].sequence, content_velocity=bad)

    run(main())
