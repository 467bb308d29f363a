"""The client against scripted daemons that misbehave: well-formed JSON with wrong
contents, late answers, no answers. Each call ends with an error instead of hanging, a
failed Watch can be started again, and a Register given up on leaves no link behind."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, List

import pytest

import framerate


def run(coro, timeout: float = 10.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def answering(answer: Callable[[Dict], str]) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
    """A scripted daemon's connection handler answering each request line with ``answer(request)``."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            request = json.loads(line)
            if "id" in request:
                writer.write(answer(request).encode() + b"\n")
                await writer.drain()
        writer.close()

    return serve


def registered(request: Dict, link: int, rate: float = 60.0) -> bytes:
    """A scripted daemon's answer to ``request`` (a Register): link ``link`` at ``rate`` Hz, as a line."""
    return ('{"jsonrpc":"2.0","id":%d,"result":{"link":%d,"display":0,"refreshRate":%.1f,'
            '"callbackRate":%.1f}}\n' % (request["id"], link, rate, rate)).encode()


Requests = Callable[[int, Dict, asyncio.StreamWriter], Awaitable[bool]]


def scripted(on_request: Requests, seen: List[tuple]) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
    """A scripted daemon's connection handler that numbers its connections from 1, records
    every request (and notification) as ``(number, request)`` in ``seen``, and hands each
    to ``await on_request(number, request, writer)``; a true result ends the connection."""
    connections = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        number = connections
        while line := await reader.readline():
            request = json.loads(line)
            seen.append((number, request))
            if await on_request(number, request, writer):
                break
        writer.close()

    return serve


def numbering(on_register: Requests, seen: List[tuple]) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
    """``scripted``, handing only the Registers to ``on_register``."""

    async def on_request(number: int, request: Dict, writer: asyncio.StreamWriter) -> bool:
        return request.get("method") == "framerate.v1.DisplayLink/Register" and await on_register(number, request, writer)

    return scripted(on_request, seen)


def watching(request: Dict, watch: int) -> bytes:
    """A scripted daemon's answer to ``request`` (a Watch): watch ``watch`` of no displays, as a line."""
    return ('{"jsonrpc":"2.0","id":%d,"result":{"watch":%d,"state":{"displays":[]}}}\n' % (request["id"], watch)).encode()


@contextlib.asynccontextmanager
async def client_of(path: Path, serve: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
                    **options: Any) -> AsyncIterator[framerate.aio.Connection]:
    """A client connected to the scripted daemon ``serve`` listening on ``path`` (closed on the way out)."""
    server = await asyncio.start_unix_server(serve, path=str(path))
    async with server:
        conn = await framerate.connect(str(path), **options)
        try:
            yield conn
        finally:
            await conn.close()


def test_a_reply_with_a_number_out_of_range_is_an_error_not_a_hang(tmp_socket_dir):
    """``1e400`` reads as infinity, and ``int(inf)`` raises ``OverflowError``, which used to
    escape the reader: the call waited for ever."""
    path = tmp_socket_dir / "scripted.sock"

    def answer(request: Dict) -> str:
        return ('{"jsonrpc":"2.0","id":%d,"result":{"link":1e400,"display":0,"refreshRate":120.0,'
                '"callbackRate":120.0}}' % request["id"])

    async def main() -> None:
        async with client_of(path, answering(answer), reconnect=False) as conn:
            with pytest.raises(framerate.ProtocolError):
                await conn.register(60, 120, 120)

    run(main())


def test_a_watch_whose_start_failed_can_be_started_again(tmp_socket_dir):
    path = tmp_socket_dir / "scripted.sock"
    methods: List[str] = []

    def answer(request: Dict) -> str:
        methods.append(request["method"])
        return ('{"jsonrpc":"2.0","id":%d,"error":{"code":8,"message":"too many watches",'
                '"data":{"status":"RESOURCE_EXHAUSTED"}}}' % request["id"])

    async def main() -> None:
        async with client_of(path, answering(answer), reconnect=False) as conn:
            watch = conn.watch()
            for _ in range(2):
                # The second start asks the daemon again (it used to fail an assertion,
                # and iteration waited for ever).
                with pytest.raises(framerate.FrameRateError):
                    await watch.start()

    run(main())
    assert methods == ["framerate.v1.Compositor/Watch"] * 2


def test_a_register_given_up_on_does_not_leave_a_link_behind(tmp_socket_dir):
    """The reply to a Register cancelled by a timeout still creates a link on the daemon:
    the client invalidates it when the reply comes, instead of leaving it to vote."""
    path = tmp_socket_dir / "scripted.sock"
    seen: List[Dict] = []

    async def main() -> None:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while line := await reader.readline():
                request = json.loads(line)
                seen.append(request)
                if request.get("method") == "framerate.v1.DisplayLink/Register":
                    await asyncio.sleep(0.3)  # answered after the client gave up
                    writer.write(registered(request, 7, rate=120.0))
                    await writer.drain()
            writer.close()

        async with client_of(path, serve, reconnect=False) as conn:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(conn.register(60, 120, 120), 0.05)
            for _ in range(200):  # up to 2 s for the late reply and the Invalidate
                if any(request.get("method") == "framerate.v1.DisplayLink/Invalidate" for request in seen):
                    break
                await asyncio.sleep(0.01)

    run(main())
    invalidates = [request for request in seen if request.get("method") == "framerate.v1.DisplayLink/Invalidate"]
    assert invalidates == [{"jsonrpc": "2.0", "method": "framerate.v1.DisplayLink/Invalidate", "params": {"link": 7}}]


def test_a_daemon_that_never_answers_times_out(tmp_socket_dir):
    """A stopped (SIGSTOP) or wedged daemon accepts and never answers: the call raises
    DeadlineExceeded after request_timeout instead of waiting for ever."""
    path = tmp_socket_dir / "scripted.sock"

    async def main() -> None:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while await reader.readline():
                pass  # reads every request, answers none
            writer.close()

        async with client_of(path, serve, reconnect=False, request_timeout=0.2) as conn:
            started = asyncio.get_running_loop().time()
            with pytest.raises(framerate.DeadlineExceeded) as raised:
                await conn.health()
            assert asyncio.get_running_loop().time() - started < 5
            assert "request_timeout" in raised.value.message

    run(main())


@pytest.mark.parametrize("kind", ["request", "notification"])
def test_a_daemon_that_stops_reading_fails_the_send_after_request_timeout(tmp_socket_dir, kind):
    """A stopped or wedged daemon also stops reading: once the socket's buffers are full,
    writing waits for ever. request_timeout bounds that wait too, and its expiry drops the
    connection as lost: the request raises ConnectionLost (a notification is dropped with
    the connection), and later calls fail at once instead of queueing behind the write."""
    path = tmp_socket_dir / "scripted.sock"

    async def main() -> None:
        stop = asyncio.Event()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await stop.wait()  # reads nothing
            writer.close()

        async with client_of(path, serve, reconnect=False, request_timeout=0.3) as conn:
            big = {"pad": "x" * (16 << 20)}  # far more than the socket buffers hold
            loop = asyncio.get_running_loop()
            started = loop.time()

            async def send() -> None:
                if kind == "request":
                    with pytest.raises(framerate.ConnectionLost) as raised:
                        await conn.call("grpc.health.v1.Health/Check", big)
                    assert "request_timeout" in raised.value.message
                else:
                    await conn.notify("framerate.v1.DisplayLink/FrameDone", big)

            try:
                await asyncio.wait_for(send(), 5)
            except asyncio.TimeoutError:
                if conn._writer is not None:
                    conn._writer.transport.abort()  # or close() would wait for the write too
                pytest.fail("the write still waited 5 s after request_timeout (0.3 s)")
            assert 0.25 <= loop.time() - started < 5
            assert not conn.connected
            with pytest.raises(framerate.ConnectionLost):
                await conn.health()
            stop.set()

    run(main())


class HoldingDaemon:
    """A scripted daemon's connection handler that reads nothing until ``reading`` is set,
    then keeps everything in ``received`` until the client closes (``saw_end``)."""

    def __init__(self) -> None:
        self.reading = asyncio.Event()
        self.saw_end = asyncio.Event()
        self.received = bytearray()

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self.reading.wait()
        while chunk := await reader.read(1 << 16):
            self.received.extend(chunk)
        self.saw_end.set()
        writer.close()


async def send_unread(conn: framerate.aio.Connection, pad: str) -> "tuple[asyncio.Future[None], asyncio.StreamWriter]":
    """Starts a FrameDone notification padded with ``pad``, without awaiting it, and returns
    it with the connection's writer once part of it waits in the client (the socket's
    buffers are full: ``pad`` must be larger than they are)."""
    loop = asyncio.get_running_loop()
    send = asyncio.ensure_future(conn.notify("framerate.v1.DisplayLink/FrameDone", {"pad": pad}))
    writer = conn._writer
    assert writer is not None
    deadline = loop.time() + 5
    while writer.transport.get_write_buffer_size() == 0 and loop.time() < deadline:
        await asyncio.sleep(0.01)
    assert writer.transport.get_write_buffer_size() > 0 and not send.done()  # the daemon has not read it
    return send, writer


def test_close_ends_the_connection_at_once_when_the_daemon_stopped_reading(tmp_socket_dir):
    """With no request_timeout a write to a daemon that stopped reading waits for ever; the
    application's close() must still end the connection: the socket closes (so the daemon
    releases its links once it reads again) and the stuck send returns."""
    path = tmp_socket_dir / "scripted.sock"

    async def main() -> None:
        daemon = HoldingDaemon()
        async with client_of(path, daemon, reconnect=False, request_timeout=None) as conn:
            loop = asyncio.get_running_loop()
            send, _ = await send_unread(conn, "x" * (16 << 20))  # far more than the socket buffers hold
            started = loop.time()
            await asyncio.wait_for(conn.close(), 30)
            # CLOSE_FLUSH_TIMEOUT, not when a timeout gave up on it
            assert loop.time() - started < framerate.aio.CLOSE_FLUSH_TIMEOUT + 3
            await asyncio.wait_for(send, 5)  # returns: the connection it waited on is gone
            daemon.reading.set()
            await asyncio.wait_for(daemon.saw_end.wait(), 5)

    run(main())


def test_close_sends_what_the_application_wrote_before_it(tmp_socket_dir):
    """A notification whose send the application did not await is still buffered when it
    calls close(); a daemon that reads it in time receives it whole, not cut off."""
    path = tmp_socket_dir / "scripted.sock"

    async def main() -> None:
        daemon = HoldingDaemon()
        pad = "x" * (4 << 20)  # more than the socket buffers hold: the rest stays in the client
        async with client_of(path, daemon, reconnect=False, request_timeout=None) as conn:
            send, _ = await send_unread(conn, pad)
            closing = asyncio.ensure_future(conn.close())
            await asyncio.sleep(0)  # close() has begun, with the line still buffered
            assert not closing.done()
            daemon.reading.set()
            await asyncio.wait_for(closing, 30)
            await asyncio.wait_for(send, 5)
            await asyncio.wait_for(daemon.saw_end.wait(), 5)
        assert daemon.received.endswith(b"\n") and daemon.received.count(b"\n") == 1
        assert json.loads(daemon.received)["params"]["pad"] == pad

    run(main(), timeout=30)


def test_a_cancelled_close_still_ends_the_connection(tmp_socket_dir):
    """close() waits up to CLOSE_FLUSH_TIMEOUT for a daemon that stopped reading; an
    application that stops waiting sooner (a wait_for's timeout) still gets the
    connection ended: the socket closes, later calls raise ConnectionClosed."""
    path = tmp_socket_dir / "scripted.sock"

    async def main() -> None:
        daemon = HoldingDaemon()
        async with client_of(path, daemon, reconnect=False, request_timeout=None) as conn:
            send, writer = await send_unread(conn, "x" * (16 << 20))
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(conn.close(), framerate.aio.CLOSE_FLUSH_TIMEOUT / 10)
            assert conn._writer is None and writer.transport.is_closing()
            await asyncio.wait_for(send, 5)  # returns: the connection it waited on is gone
            with pytest.raises(framerate.ConnectionClosed):
                await conn.health()
            daemon.reading.set()
            await asyncio.wait_for(daemon.saw_end.wait(), 5)

    run(main())


def test_a_link_invalidated_while_it_is_registered_again_leaves_nothing_behind(tmp_socket_dir):
    """During a reconnect the client registers its links again; one the application
    invalidates while its new registration is in flight is invalidated on the daemon
    too, once the registration's reply gives its new id."""
    path = tmp_socket_dir / "scripted.sock"
    seen: List[tuple] = []  # (connection number, request)

    async def main() -> None:
        reregistered = asyncio.Event()

        async def on_register(number: int, request: Dict, writer: asyncio.StreamWriter) -> bool:
            if number == 1:
                writer.write(registered(request, 1))
                await writer.drain()
                await asyncio.sleep(0.05)
                return True  # the daemon goes away: the client reconnects
            reregistered.set()
            await asyncio.sleep(0.2)  # the application invalidates meanwhile
            writer.write(registered(request, 11))
            await writer.drain()
            return False

        serve = numbering(on_register, seen)
        async with client_of(path, serve, reconnect=framerate.ReconnectPolicy(initial_delay=0.01, jitter=0)) as conn:
            link = await conn.register(30, 60, 60)
            await asyncio.wait_for(reregistered.wait(), 5)
            await link.invalidate()
            for _ in range(200):  # up to 2 s for the reply and the Invalidate
                if any(request.get("method") == "framerate.v1.DisplayLink/Invalidate" for _, request in seen):
                    break
                await asyncio.sleep(0.01)

    run(main())
    invalidates = [(number, request) for number, request in seen if request.get("method") == "framerate.v1.DisplayLink/Invalidate"]
    assert invalidates == [(2, {"jsonrpc": "2.0", "method": "framerate.v1.DisplayLink/Invalidate", "params": {"link": 11}})]


def test_a_reregistration_left_unanswered_fails_the_attempt_not_the_link(tmp_socket_dir):
    """A daemon that accepts the reconnect and never answers the re-registration (stopped,
    wedged) makes that attempt fail after request_timeout: the client drops the connection
    and registers the link again on the next one, instead of ending it."""
    path = tmp_socket_dir / "scripted.sock"
    seen: List[tuple] = []  # (connection number, request)

    async def main() -> None:
        back = asyncio.Event()

        async def on_register(number: int, request: Dict, writer: asyncio.StreamWriter) -> bool:
            if number == 2:
                return False  # wedged: reads, never answers
            writer.write(registered(request, number))
            await writer.drain()
            if number == 1:
                return True  # the daemon goes away: the client reconnects
            back.set()
            return False

        serve = numbering(on_register, seen)
        policy = framerate.ReconnectPolicy(initial_delay=0.01, jitter=0)
        async with client_of(path, serve, reconnect=policy, request_timeout=0.2) as conn:
            link = await conn.register(30, 60, 60)
            await asyncio.wait_for(back.wait(), 5)
            for _ in range(200):  # up to 2 s for the client to take the answer
                if conn.reconnects:
                    break
                await asyncio.sleep(0.01)
            assert conn.reconnects == 1
            assert not link.ended, link.error
            assert link.daemon_id == 3

    run(main())
    assert [number for number, request in seen if request.get("method") == "framerate.v1.DisplayLink/Register"] == [1, 2, 3]


def test_nan_and_infinity_are_not_json(tmp_socket_dir):
    """Python's ``json`` takes ``NaN`` and ``Infinity``; the daemon never writes them and
    RFC 8259 has none: such a line is malformed, and the call fails instead of handing
    the application a rate of NaN."""
    path = tmp_socket_dir / "scripted.sock"

    def answer(request: Dict) -> str:
        return ('{"jsonrpc":"2.0","id":%d,"result":{"link":1,"display":0,"refreshRate":NaN,'
                '"callbackRate":Infinity}}' % request["id"])

    async def main() -> None:
        async with client_of(path, answering(answer), reconnect=False) as conn:
            with pytest.raises(framerate.FrameRateError) as raised:
                await conn.register(60, 120, 120)
            assert isinstance(raised.value, framerate.ProtocolError) and "NaN is not a JSON number" in str(raised.value), raised.value

    run(main())


def test_a_result_of_the_wrong_shape_is_a_protocol_error(tmp_socket_dir):
    """Results the client reads after the call (SetCaps' displays, Boost's boostedUntil)
    of the wrong shape raise ProtocolError, not a bare TypeError or KeyError."""
    path = tmp_socket_dir / "scripted.sock"

    def answer(request: Dict) -> str:
        if request["method"] == "framerate.v1.DisplayLink/Register":
            return registered(request, 1).decode().strip()
        if request["method"] == "framerate.v1.DisplayLink/Boost":
            return ('{"jsonrpc":"2.0","id":%d,"result":{"link":1,"display":0,"refreshRate":120.0,"callbackRate":120.0,'
                    '"boostedUntil":"soon"}}' % request["id"])
        return '{"jsonrpc":"2.0","id":%d,"result":{"displays":5}}' % request["id"]

    async def main() -> None:
        async with client_of(path, answering(answer), reconnect=False) as conn:
            link = await conn.register(60, 120, 120)
            with pytest.raises(framerate.ProtocolError):
                await link.boost(0.1)
            with pytest.raises(framerate.ProtocolError):
                await conn.set_caps(low_power_mode=True)

    run(main())


def test_a_slow_daemon_costs_a_reconnect_attempt_one_request_timeout(tmp_socket_dir):
    """The links are registered again all at once, within one request_timeout in all: a
    daemon that came back answering each Register 0.4 s late fails an attempt with four
    links after the 1 s timeout (it used to take 4 x 0.4 s, and then the next call its
    own timeout on top), and the links stay."""
    path = tmp_socket_dir / "scripted.sock"
    seen: List[tuple] = []  # (connection number, request)
    spans: Dict[int, List[float]] = {}  # connection number -> [accepted, closed by the client]

    async def main() -> None:
        loop = asyncio.get_running_loop()
        connections = 0
        second_closed = asyncio.Event()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal connections
            connections += 1
            number = connections
            spans[number] = [loop.time()]
            answered = 0
            try:
                while line := await reader.readline():
                    request = json.loads(line)
                    seen.append((number, request))
                    if "id" not in request:
                        continue
                    if number > 1:
                        await asyncio.sleep(0.4)
                    answered += 1
                    writer.write(registered(request, 10 * number + answered))
                    await writer.drain()
                    if number == 1 and answered == 4:
                        break  # the daemon goes away: the client reconnects
            except ConnectionError:
                pass  # the client closed this connection while an answer was on its way
            finally:
                spans[number].append(loop.time())
                if number == 2:
                    second_closed.set()
                writer.close()

        policy = framerate.ReconnectPolicy(initial_delay=0.01, jitter=0)
        async with client_of(path, serve, reconnect=policy, request_timeout=1.0) as conn:
            links = [await conn.register(30, 60, 60) for _ in range(4)]
            await asyncio.wait_for(second_closed.wait(), 5)
            assert all(not link.ended for link in links), [link.error for link in links]

    run(main(), timeout=15)
    accepted, closed = spans[2]
    # The attempt fails at its one deadline (1 s after the requests went out), when the
    # third answer is still 0.2 s away; the stand-in sees the close once its sleep ends.
    assert closed - accepted < 1.9, closed - accepted


def test_a_watch_unwatched_while_it_is_subscribed_again_leaves_nothing_behind(tmp_socket_dir):
    """During a reconnect the client subscribes its watches again; one the application
    unwatches while its Watch is in flight is unwatched on the daemon too, once the reply
    gives its new id, and hears nothing more (not even ``resynchronized``)."""
    path = tmp_socket_dir / "scripted.sock"
    seen: List[tuple] = []

    async def main() -> None:
        connections = 0
        waiting = asyncio.Event()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal connections
            connections += 1
            number = connections
            watches = 0
            while line := await reader.readline():
                request = json.loads(line)
                seen.append((number, request))
                if "id" not in request:
                    continue
                if number == 2 and watches == 0:
                    waiting.set()
                    await asyncio.sleep(0.3)  # the application unwatches meanwhile
                watches += 1
                writer.write(watching(request, 10 * number + watches))
                await writer.drain()
                if number == 1 and watches == 2:
                    break
            writer.close()

        policy = framerate.ReconnectPolicy(initial_delay=0.01, jitter=0)
        async with client_of(path, serve, reconnect=policy) as conn:
            kept, dropped = conn.watch(), conn.watch()
            await kept.start()
            await dropped.start()
            await asyncio.wait_for(waiting.wait(), 5)
            await dropped.unwatch()
            for _ in range(200):  # up to 2 s for both replies and the Unwatch
                if any(request.get("method") == "framerate.v1.Compositor/Unwatch" for _, request in seen):
                    break
                await asyncio.sleep(0.01)
            assert (await asyncio.wait_for(kept.__anext__(), 2)).kind == "resynchronized"
            with pytest.raises(StopAsyncIteration):
                await asyncio.wait_for(dropped.__anext__(), 2)

    run(main())
    unwatches = [(number, request) for number, request in seen if request.get("method") == "framerate.v1.Compositor/Unwatch"]
    assert unwatches == [(2, {"jsonrpc": "2.0", "method": "framerate.v1.Compositor/Unwatch", "params": {"watch": 22}})]


def tick_line(link: int, sequence: int) -> bytes:
    """A scripted daemon's Tick notification for ``link`` at 60 Hz, as a line."""
    return ('{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/Tick","params":{"link":%d,"sequence":%d,'
            '"timestamp":%.4f,"targetTimestamp":%.4f,"duration":0.0167,"refreshRate":60.0,"callbackRate":60.0}}\n'
            % (link, sequence, 100 + sequence / 60, 100 + (sequence + 1) / 60)).encode()


def test_what_a_reconnect_delivers_comes_once_calls_work(tmp_socket_dir):
    """During a reconnect the new daemon ticks a link as soon as it is registered again,
    and a watch's ``resynchronized`` event used to be queued as soon as its Watch was
    answered: an application woken by either called at once and got ``ConnectionLost``
    ("down and reconnecting"), since the attempt had not finished. Now ticks and events
    wait for the attempt to succeed. A link the daemon refused during an attempt that then
    failed is registered again on the next attempt instead of being ended."""
    path = tmp_socket_dir / "scripted.sock"
    seen: List[tuple] = []  # (connection number, request)

    async def on_request(number: int, request: Dict, writer: asyncio.StreamWriter) -> bool:
        method = request.get("method")
        if "id" not in request:
            return False
        if method == "framerate.v1.DisplayLink/Register":
            label = request["params"].get("label")
            if number == 2 and label == "refused":
                writer.write(('{"jsonrpc":"2.0","id":%d,"error":{"code":5,"message":"no display 0",'
                              '"data":{"status":"NOT_FOUND"}}}\n' % request["id"]).encode())
            else:
                link = 10 * number + (1 if label == "ticking" else 2)
                writer.write(registered(request, link))
                if label == "ticking" and number > 1:
                    writer.write(tick_line(link, 1))  # ticks at once, before the Watch is answered
        elif method == "framerate.v1.Compositor/Watch":
            if number == 2:
                return True  # the attempt fails after the daemon refused one link
            writer.write(watching(request, number))
            if number > 1:
                writer.write(tick_line(10 * number + 1, 2))
        else:
            writer.write(('{"jsonrpc":"2.0","id":%d,"result":{}}\n' % request["id"]).encode())
        await writer.drain()
        return number == 1 and method == "framerate.v1.Compositor/Watch"  # the daemon goes away once all is set up

    async def main() -> None:
        policy = framerate.ReconnectPolicy(initial_delay=0.01, jitter=0)
        async with client_of(path, scripted(on_request, seen), reconnect=policy) as conn:
            ticking = await conn.register(30, 60, 60, label="ticking")
            refused = await conn.register(30, 60, 60, label="refused")
            watch = conn.watch()
            await watch.start()
            event = await watch.next_event(5)
            assert event.kind == "resynchronized"
            assert conn.connected and conn.reconnects == 1  # calls work when it is seen
            assert not refused.ended, refused.error  # the failed attempt's refusal did not end it
            assert refused.daemon_id == 32
            tick = await ticking.next_tick(5)
            assert tick.sequence == 1 and conn.connected
            await conn.call("framerate.v1.Test/Echo", {})  # a call made on waking goes through

    run(main())
    assert [(number, request["method"]) for number, request in seen if request["method"] != "framerate.v1.Test/Echo"] == [
        (1, "framerate.v1.DisplayLink/Register"), (1, "framerate.v1.DisplayLink/Register"),
        (1, "framerate.v1.Compositor/Watch"),
        (2, "framerate.v1.DisplayLink/Register"), (2, "framerate.v1.DisplayLink/Register"),
        (2, "framerate.v1.Compositor/Watch"),
        (3, "framerate.v1.DisplayLink/Register"), (3, "framerate.v1.DisplayLink/Register"),
        (3, "framerate.v1.Compositor/Watch"),
    ]


def test_a_daemon_that_ticks_without_answering_fails_the_attempt_at_the_held_limit(tmp_socket_dir, monkeypatch):
    """What a reconnect attempt holds until its re-registrations are answered is bounded
    (``HELD_LIMIT``, 5 here): a daemon that answers the Register, then keeps ticking
    without answering the Watch fails the attempt instead of growing the client's memory,
    and the next attempt starts afresh."""
    monkeypatch.setattr(framerate.aio, "HELD_LIMIT", 5)
    path = tmp_socket_dir / "scripted.sock"
    seen: List[tuple] = []

    async def on_request(number: int, request: Dict, writer: asyncio.StreamWriter) -> bool:
        method = request.get("method")
        if method == "framerate.v1.DisplayLink/Register":
            writer.write(registered(request, 7))
            if number == 2:
                for sequence in range(1, 7):  # six ticks; the Watch will go unanswered
                    writer.write(tick_line(7, sequence))
        elif method == "framerate.v1.Compositor/Watch" and number != 2:
            writer.write(watching(request, 1))
            if number == 3:
                writer.write(tick_line(7, 1))
        await writer.drain()
        return number == 1 and method == "framerate.v1.Compositor/Watch"

    async def main() -> None:
        policy = framerate.ReconnectPolicy(initial_delay=0.01, jitter=0)
        async with client_of(path, scripted(on_request, seen), reconnect=policy) as conn:
            link = await conn.register(30, 60, 60)
            watch = conn.watch()
            await watch.start()
            assert (await watch.next_event(5)).kind == "resynchronized"
            assert conn.connected and conn.reconnects == 1
            tick = await link.next_tick(5)  # the third connection's: none of the second's reached it
            assert tick.sequence == 1 and not link.ended
            assert link.poll_tick() is None

    run(main())
    assert sorted({number for number, _ in seen}) == [1, 2, 3]


def test_an_attempt_whose_socket_drops_with_its_last_answer_is_retried(tmp_socket_dir, monkeypatch):
    """The Register's answer and, in the same write, more ticks than the attempt may hold:
    the reader takes the answer, then drops the socket at the tick past ``HELD_LIMIT``
    before the reconnect loop runs again. The loop saw every answer and used to declare
    the connection back with no socket under it and no retry left: calls failed and ticks
    never came. The attempt fails instead, and the next one registers the link."""
    monkeypatch.setattr(framerate.aio, "HELD_LIMIT", 5)
    path = tmp_socket_dir / "scripted.sock"
    seen: List[tuple] = []

    async def on_request(number: int, request: Dict, writer: asyncio.StreamWriter) -> bool:
        if request.get("method") == "grpc.health.v1.Health/Check":
            writer.write(('{"jsonrpc":"2.0","id":%d,"result":{"status":"SERVING"}}\n' % request["id"]).encode())
            return False
        if request.get("method") != "framerate.v1.DisplayLink/Register":
            return False
        ticks = range(1, 7) if number == 2 else range(1, 2) if number == 3 else range(0)
        writer.write(registered(request, 7) + b"".join(tick_line(7, sequence) for sequence in ticks))
        await writer.drain()
        return number == 1

    async def main() -> None:
        policy = framerate.ReconnectPolicy(initial_delay=0.01, jitter=0)
        async with client_of(path, scripted(on_request, seen), reconnect=policy) as conn:
            link = await conn.register(30, 60, 60)
            tick = await link.next_tick(5)  # the third connection's
            assert conn.connected and conn.reconnects == 1
            assert tick.sequence == 1 and link.poll_tick() is None
            await conn.call("grpc.health.v1.Health/Check", {})

    run(main())
    assert sorted({number for number, _ in seen}) == [1, 2, 3]
