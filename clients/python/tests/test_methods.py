"""Every method against a real framerated, with the asyncio and the blocking APIs."""

from __future__ import annotations

import asyncio
import math
import os
import time

import pytest

import framerate
from framerate.aio import FRAME_DONE, INVALIDATE, UPDATE

from conftest import wait_until


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def links_of(state):
    return [link for display in state["displays"] for link in display["links"]]


def test_daemon_not_running(tmp_socket_dir):
    path = str(tmp_socket_dir / "nobody-home.sock")

    async def main():
        await framerate.connect(path)

    with pytest.raises(framerate.DaemonNotRunning) as caught:
        run(main())
    assert caught.value.path == path
    assert path in str(caught.value) and "framerated --socket" in str(caught.value)
    with pytest.raises(framerate.DaemonNotRunning):
        framerate.connect_blocking(path)


def test_socket_from_environment(daemon, monkeypatch):
    monkeypatch.setenv("FRAMERATED_SOCKET", daemon.socket_path)
    with framerate.connect_blocking() as conn:
        assert conn.path == daemon.socket_path
        assert conn.health() == "SERVING"


def test_health_and_list_services(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            assert await conn.health() == "SERVING"
            assert await conn.health("framerate.v1.DisplayLink") == "SERVING"
            with pytest.raises(framerate.NotFound):
                await conn.health("framerate.v2.Nope")
            services = await conn.list_services()
            names = {service["name"] for service in services}
            assert {"framerate.v1.DisplayLink", "framerate.v1.Compositor", "grpc.health.v1.Health"} <= names
            methods = {m["fullName"] for s in services for m in s["methods"]}
            assert "framerate.v1.DisplayLink/Register" in methods
            with pytest.raises(framerate.Unimplemented):
                await conn.call("framerate.v1.DisplayLink/Frobnicate")

    run(main())


def test_register_ticks_on_the_monotonic_clock(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(80, 120, 120, label="py-ticks", high_frame_rate=True)
            assert link.id >= 1 and link.display == 0
            assert link.status.refresh_rate == 120.0 and link.status.callback_rate == 120.0
            ticks = []
            async for tick in link:
                now = time.monotonic()
                assert isinstance(tick, framerate.Tick)
                assert abs(tick.timestamp - now) < 0.5, "timestamps are CLOCK_MONOTONIC, like time.monotonic()"
                ticks.append(tick)
                if len(ticks) == 12:
                    break
            for previous, tick in zip(ticks, ticks[1:]):
                assert tick.sequence == previous.sequence + tick.skipped + 1
                assert tick.timestamp > previous.timestamp
            last = ticks[-1]
            assert last.link == link.id
            assert last.refresh_rate == 120.0 and last.callback_rate == 120.0
            assert math.isclose(last.duration, 1 / 120, abs_tol=1e-6)
            assert math.isclose(last.target_timestamp - last.timestamp, 1 / last.callback_rate, abs_tol=1e-6)

    run(main())


def test_without_the_entitlement_a_phone_link_gets_60(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(80, 120, 120)
            assert link.status.refresh_rate == 60.0 and link.status.callback_rate == 60.0

    run(main())


@pytest.mark.parametrize(
    "args, field",
    [
        ((0, 120), "range.minimum"),
        ((90, 60), "range.maximum"),
        ((60, 2000), "range.maximum"),
        ((30, 60, 120), "range.preferred"),
        ((float("nan"), 60), "range.minimum"),
        (("60", 120), "range.minimum"),
    ],
)
def test_register_invalid_range_names_the_field(daemon, args, field):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            with pytest.raises(framerate.InvalidArgument) as caught:
                await conn.register(*args)
            assert caught.value.field == field
            assert caught.value.status == "INVALID_ARGUMENT" and caught.value.code == -32602
            assert caught.value.message
            assert conn.links == []

    run(main())


def test_register_other_errors(make_daemon):
    daemon = make_daemon("--max-links-per-connection", "1")

    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            with pytest.raises(framerate.InvalidArgument) as caught:
                await conn.register(30, 60, label="x" * 300)
            assert caught.value.field == "label"
            with pytest.raises(framerate.NotFound):
                await conn.register(30, 60, display=7)
            await conn.register(30, 60)
            with pytest.raises(framerate.ResourceExhausted) as exhausted:
                await conn.register(30, 60)
            assert exhausted.value.code == 8

    run(main())


def test_connection_limit_is_resource_exhausted(make_daemon):
    daemon = make_daemon("--max-connections", "1", "--log-level", "debug")
    # The readiness probe's connection holds the only slot until the daemon has seen it
    # close; connecting before that would be refused. Wait for the daemon to say so.
    wait_until(lambda: "client disconnected" in daemon.log_text(), 5, "the readiness probe to be released")

    async def main():
        async with framerate.connect(daemon.socket_path) as first:
            assert await first.health() == "SERVING"
            async with framerate.connect(daemon.socket_path) as second:
                started = time.monotonic()
                with pytest.raises(framerate.ResourceExhausted) as caught:
                    await second.state()
                assert caught.value.code == 8 and "--max-connections" in caught.value.message
                assert time.monotonic() - started < 5
            assert await first.health() == "SERVING"

    run(main())


def test_update_pause_resume(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(80, 120, 120, high_frame_rate=True)
            await link.next_tick(5)
            status = await link.update(30, 60, 30)
            assert status.callback_rate == 30.0 and link.range == (30.0, 60.0, 30.0)
            with pytest.raises(framerate.InvalidArgument) as caught:
                await link.update(30, 60, 90)
            assert caught.value.field == "range.preferred"
            assert link.range == (30.0, 60.0, 30.0)
            with pytest.raises(ValueError):
                await link.update(30)

            await link.pause()
            assert link.paused
            (entry,) = links_of(await conn.state())
            assert entry["paused"] is True and entry["range"]["preferred"] == 30.0
            while True:  # drain ticks written before the pause
                try:
                    await link.next_tick(0.2)
                except asyncio.TimeoutError:
                    break
            with pytest.raises(asyncio.TimeoutError):
                await link.next_tick(0.3)
            await link.resume()
            tick = await link.next_tick(5)
            assert tick is not None and tick.callback_rate in (30.0, 60.0)

    run(main())


def test_invalidate_and_unknown_links(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(30, 60, 60)
            await link.next_tick(5)
            await link.invalidate()
            assert link.ended and link.error is None
            remaining = [tick async for tick in link]  # ends, after any tick already queued
            assert len(remaining) <= 8
            assert conn.links == []
            with pytest.raises(framerate.NotFound):
                await link.invalidate()
            with pytest.raises(framerate.NotFound):
                await link.update(paused=True)
            with pytest.raises(framerate.NotFound):
                await conn.call(UPDATE, {"link": 9999, "paused": True})
            with pytest.raises(framerate.InvalidArgument) as caught:
                await conn.call(UPDATE, {"link": 0})
            assert caught.value.field == "link"

    run(main())


def test_a_foreign_link_is_not_found(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as owner, framerate.connect(daemon.socket_path) as other:
            link = await owner.register(30, 60, 60)
            for method, params in ((UPDATE, {"link": link.daemon_id, "paused": True}), (INVALIDATE, {"link": link.daemon_id}),
                                   (FRAME_DONE, {"link": link.daemon_id, "sequence": 0})):
                with pytest.raises(framerate.NotFound) as caught:
                    await other.call(method, params)
                assert caught.value.code == 5
            assert (await link.next_tick(5)) is not None  # untouched

    run(main())


def test_frame_done_paces_overruns(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(30, 60, 60)
            first = await link.next_tick(5)
            await link.frame_done(first.sequence)
            second = await link.next_tick(5)
            await asyncio.sleep(0.06)  # a 60 ms frame: 3+ intervals of 16.7 ms
            await link.frame_done(second.sequence)
            while True:
                tick = await link.next_tick(5)
                if tick.sequence > second.sequence:
                    break
            assert tick.skipped >= 2, tick
            with pytest.raises(framerate.OutOfRange):
                await conn.call(FRAME_DONE, {"link": link.daemon_id, "sequence": 999999})

    run(main())


def test_client_side_drops_are_counted_as_skipped(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path, tick_buffer=2) as conn:
            link = await conn.register(80, 120, 120, high_frame_rate=True)
            first = await link.next_tick(5)
            await asyncio.sleep(0.2)  # ~24 ticks arrive; only the newest 2 are kept
            second = await link.next_tick(5)
            assert second.skipped >= 10
            assert second.sequence == first.sequence + second.skipped + 1

    run(main())


def test_state_lists_the_link(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(30, 60, 60, label="py-state")
            state = await conn.state()
            display = state["displays"][0]
            assert display["profile"] == "promotion-phone" and 120.0 in display["supportedRates"]
            (entry,) = links_of(state)
            assert entry["link"] == link.id and entry["label"] == "py-state"
            assert entry["pid"] == os.getpid() and entry["uid"] == os.geteuid()
            assert entry["range"] == {"minimum": 30.0, "maximum": 60.0, "preferred": 60.0}

    run(main())


def test_set_caps(daemon):
    # Allowed: the test runs as root or as the daemon's own user.
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(80, 120, 120, high_frame_rate=True)
            displays = await conn.set_caps(low_power_mode=True, thermal_state="serious")
            assert displays == [{"display": 0, "caps": {"lowPowerMode": True, "limitFrameRate": False, "thermalState": "serious"}}]
            state = await conn.state()
            assert state["displays"][0]["caps"]["lowPowerMode"] is True
            while True:  # the cap takes the link to 60 Hz
                tick = await link.next_tick(5)
                if tick.callback_rate == 60.0:
                    break
            with pytest.raises(framerate.InvalidArgument) as caught:
                await conn.set_caps(thermal_state="hot")
            assert caught.value.field == "thermalState"
            with pytest.raises(framerate.NotFound):
                await conn.set_caps(display=7, low_power_mode=True)
            displays = await conn.set_caps(display=0, low_power_mode=False, thermal_state="nominal")
            assert displays[0]["caps"]["thermalState"] == "nominal"

    run(main())


def test_watch_events(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as watcher, framerate.connect(daemon.socket_path) as client:
            async with watcher.watch() as watch:
                assert watch.id >= 1 and links_of(watch.state) == []
                link = await client.register(30, 60, 60, label="watched")
                await client.set_caps(limit_frame_rate=True)
                await link.invalidate()
                kinds = []
                async for event in watch:
                    assert isinstance(event, framerate.Event) and event.watch == watch.id
                    kinds.append(event.kind)
                    if event.kind == "linkAdded":
                        assert event["link"]["link"] == link.id and event["link"]["label"] == "watched"
                    if event.kind == "capsChanged":
                        assert event["caps"]["limitFrameRate"] is True
                    if event.kind == "linkRemoved":
                        assert event["link"] == link.id and event["reason"] == "invalidated"
                        break
                assert kinds.index("linkAdded") < kinds.index("capsChanged") < kinds.index("linkRemoved")
            assert [event async for event in watch] == []  # ended by unwatch
            await client.set_caps(limit_frame_rate=False)

    run(main())


def test_blocking_api(daemon):
    with framerate.connect_blocking(daemon.socket_path) as conn:
        assert conn.health() == "SERVING"
        assert conn.list_services()
        link = conn.register(80, 120, 120, label="py-blocking", high_frame_rate=True)
        ticks = []
        for tick in link:
            ticks.append(tick)
            link.frame_done(tick.sequence)
            if len(ticks) == 5:
                break
        assert all(b.sequence == a.sequence + b.skipped + 1 for a, b in zip(ticks, ticks[1:]))
        assert link.update(30, 60, 60).callback_rate == 60.0
        with pytest.raises(framerate.InvalidArgument) as caught:
            link.update(0, 60)
        assert caught.value.field == "range.minimum"
        link.pause()
        assert links_of(conn.state())[0]["paused"] is True
        while True:
            try:
                link.next_tick(0.2)
            except TimeoutError:
                break
        link.resume()
        assert link.next_tick(5) is not None
        watch = conn.watch()
        assert watch.state is not None
        conn.set_caps(low_power_mode=False)
        event = watch.next_event(5)
        assert event.kind == "capsChanged"
        watch.unwatch()
        assert watch.next_event(1) is None
        link.invalidate()
        with pytest.raises(framerate.LinkEnded):
            while True:
                link.next_tick(1)
        with pytest.raises(framerate.NotFound):
            link.invalidate()
    with pytest.raises(framerate.ConnectionClosed):
        conn.state()
