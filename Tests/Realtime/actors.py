#!/usr/bin/env python3
"""The processes of the attack test: a victim that measures its ticks, a prober that
times other clients' control calls, holders of many links, and the attackers. Each is
a real, separate process speaking raw newline-delimited JSON-RPC (an attacker does not
use a client library, and the measuring processes must not add one's latency).

Usage: actors.py ROLE --socket PATH --seconds S [options]; results are one JSON line on
stdout. Every role stops by itself after --seconds.
"""
import argparse
import json
import os
import select
import socket
import sys
import time

GET_STATE = b'{"jsonrpc":"2.0","id":1,"method":"framerate.v1.Compositor/GetState"}\n'
HEALTH = b'{"jsonrpc":"2.0","id":1,"method":"grpc.health.v1.Health/Check"}\n'


def connect(path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    return sock


def call(sock, reader, line):
    sock.sendall(line)
    while True:
        reply = reader.readline()
        if not reply:
            raise ConnectionError("daemon closed the connection")
        message = json.loads(reply)
        if "id" in message:
            return message


def register_line(ident, minimum, maximum, preferred, entitled=False, paused=False):
    params = {"range": {"minimum": minimum, "maximum": maximum, "preferred": preferred},
              "highFrameRate": entitled, "paused": paused}
    return (json.dumps({"jsonrpc": "2.0", "id": ident, "method": "framerate.v1.DisplayLink/Register",
                        "params": params}, separators=(",", ":")) + "\n").encode()


def send_pending(sock, pending):
    """Sends what the non-blocking `sock` takes of `pending` (a memoryview); returns the
    rest, or None when the connection failed."""
    try:
        return pending[sock.send(pending):]
    except BlockingIOError:
        return pending
    except OSError:
        return None


def victim(args):
    """A 120 Hz link; records when each tick arrives."""
    sock = connect(args.socket)
    reader = sock.makefile("rb")
    reply = call(sock, reader, register_line(1, 80, 120, 120, entitled=True))
    assert "result" in reply, reply
    print(json.dumps({"ready": True}), flush=True)
    arrivals, sequences, skipped = [], [], 0
    start = time.monotonic()
    deadline = start + args.seconds
    sock.settimeout(0.5)
    while time.monotonic() < deadline:
        try:
            line = reader.readline()
        except socket.timeout:
            continue
        if not line:
            break
        if b'.DisplayLink/Tick"' not in line:
            continue
        now = time.monotonic()
        if now < start + args.warmup:
            continue
        tick = json.loads(line)["params"]
        arrivals.append(now)
        sequences.append(tick["sequence"])
        skipped += tick["skipped"]
    gaps = sorted(b - a for a, b in zip(arrivals, arrivals[1:]))
    window = args.seconds - args.warmup
    print(json.dumps({
        "ticks": len(arrivals), "expected": round(window * 120), "skipped": skipped,
        "gap_p99_ms": 1000 * gaps[int(0.99 * (len(gaps) - 1))] if gaps else None,
        "gap_max_ms": 1000 * gaps[-1] if gaps else None,
    }), flush=True)


def prober(args):
    """Other clients' control calls: Health/Check, then Register + Invalidate, timed, 50 a second."""
    sock = connect(args.socket)
    reader = sock.makefile("rb")
    latencies = []
    deadline = time.monotonic() + args.seconds
    ident = 10
    while time.monotonic() < deadline:
        began = time.monotonic()
        call(sock, reader, HEALTH)
        latencies.append(time.monotonic() - began)
        began = time.monotonic()
        ident += 1
        reply = call(sock, reader, register_line(ident, 30, 60, 60))
        link = reply["result"]["link"]
        ident += 1
        call(sock, reader, (json.dumps({"jsonrpc": "2.0", "id": ident, "method": "framerate.v1.DisplayLink/Invalidate",
                                        "params": {"link": link}}) + "\n").encode())
        latencies.append(time.monotonic() - began)
        time.sleep(0.02)
    latencies.sort()
    print(json.dumps({"calls": len(latencies), "p99_ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))]}), flush=True)


def holder(args):
    """--links paused links over several connections (they show in GetState, tick nowhere)."""
    links = register_links(args.socket, args.links)
    assert len(links) == args.links, f"{len(links)} of {args.links} links registered"
    print(json.dumps({"ready": True, "links": args.links}), flush=True)
    time.sleep(args.seconds)
    print(json.dumps({"held": args.links}), flush=True)


def flood(args, line, batch=1, read=True):
    """Writes requests as fast as the socket takes them; reads (and drops) replies or never reads."""
    sock = connect(args.socket)
    sock.setblocking(False)
    payload = line * batch if batch == 1 else (b"[" + b",".join([line.strip()] * batch) + b"]\n")
    payload = payload * max(1, 4096 // len(payload))
    deadline = time.monotonic() + args.seconds
    sent = received = 0
    pending = memoryview(b"")
    while time.monotonic() < deadline:
        readable, writable, _ = select.select([sock] if read else [], [sock], [], 0.05)
        if writable:
            if not pending:
                pending = memoryview(payload)
            rest = send_pending(sock, pending)
            if rest is None:
                break
            sent += len(pending) - len(rest)
            pending = rest
        if readable:
            try:
                chunk = sock.recv(1 << 20)
                if not chunk:
                    break
                received += len(chunk)
            except BlockingIOError:
                pass
            except OSError:
                break
    print(json.dumps({"sent": sent, "received": received}), flush=True)


def watches(args):
    """Asks for thousands of watches on one connection, then keeps reading events."""
    sock = connect(args.socket)
    reader = sock.makefile("rb")
    granted = refused = 0
    for ident in range(4096):
        reply = call(sock, reader, (json.dumps({"jsonrpc": "2.0", "id": ident + 1, "method": "framerate.v1.Compositor/Watch"}) + "\n").encode())
        if "result" in reply:
            granted += 1
        else:
            refused += 1
    sock.setblocking(False)
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        select.select([sock], [], [], 0.05)
        try:
            if not sock.recv(1 << 20):
                break
        except BlockingIOError:
            pass
    print(json.dumps({"granted": granted, "refused": refused}), flush=True)


def churn(args):
    """Register + Invalidate as fast as the daemon answers."""
    sock = connect(args.socket)
    reader = sock.makefile("rb")
    deadline = time.monotonic() + args.seconds
    count = 0
    ident = 0
    while time.monotonic() < deadline:
        ident += 1
        reply = call(sock, reader, register_line(ident, 30, 120, 120, entitled=(ident % 2 == 0)))
        if "result" not in reply:
            continue
        ident += 1
        call(sock, reader, (json.dumps({"jsonrpc": "2.0", "id": ident, "method": "framerate.v1.DisplayLink/Invalidate",
                                        "params": {"link": reply["result"]["link"]}}) + "\n").encode())
        count += 1
    print(json.dumps({"cycles": count}), flush=True)


def register_links(path, count):
    """`count` paused links over connections of 60 (the per-connection limit), each
    connection's in one batch line, ranges spread over 10-120 Hz; returns (socket, link id)
    pairs. Paused, so no connection has ticks to read while the next ones register."""
    links = []
    for offset in range(0, count, 60):
        sock = connect(path)
        reader = sock.makefile("rb")
        requests = [register_line(index + 1, 10 + (offset + index) % 110, 120, 10 + (offset + index) % 110, paused=True).strip()
                    for index in range(min(60, count - offset))]
        sock.sendall(b"[" + b",".join(requests) + b"]\n")
        line = reader.readline()
        if not line:
            raise ConnectionError("daemon closed the connection")
        # A batch's replies, or one error object for a batch refused whole.
        replies = json.loads(line)
        for reply in replies if isinstance(replies, list) else [replies]:
            if "result" in reply:
                links.append((sock, reply["result"]["link"]))
    return links


def drain(sockets, seconds, keep=None):
    """Reads every socket in `sockets` (non-blocking) for `seconds`; returns the bytes read
    from `keep`. A socket that fails is dropped."""
    readers = list(sockets)
    received = 0
    deadline = time.monotonic() + seconds
    while readers and time.monotonic() < deadline:
        readable, _, _ = select.select(readers, [], [], 0.05)
        for ready in readable:
            count = read_chunk(ready, readers)
            if ready is keep:
                received += count
    return received


def read_chunk(ready, readers):
    """Reads what the non-blocking socket `ready` holds (up to 1 MiB); returns how many
    bytes. At the end of its stream, or when it fails, it is removed from `readers`."""
    try:
        chunk = ready.recv(1 << 20)
    except BlockingIOError:
        return 0
    except OSError:
        chunk = b""
    if not chunk:
        readers.remove(ready)
    return len(chunk)


def trace(args, read):
    """The per-user limits' worth of ticking links (--links over connections of 60, their
    ticks read), then a trace of them all on a connection of its own, whose records are
    read or never read: the tick plane records every tick while a trace runs."""
    # Registered paused (a connection not read while the others register would pass its
    # high-water mark), then every connection unpaused and read.
    links = register_links(args.socket, args.links)
    ticking = unpause(links)
    tracer = connect(args.socket)
    reply = call(tracer, tracer.makefile("rb"), b'{"jsonrpc":"2.0","id":1,"method":"framerate.v1.Compositor/Trace"}\n')
    tracer.setblocking(False)
    print(json.dumps({"ready": True, "links": len(links), "trace": "result" in reply}), flush=True)
    received = drain(ticking + ([tracer] if read else []), args.seconds, keep=tracer)
    print(json.dumps({"links": len(links), "trace": "result" in reply, "trace_bytes_read": received}), flush=True)


def unpause(links):
    """Makes the connections of `links` (socket, link id) non-blocking and unpauses each
    one's links in one batch line; returns the connections."""
    connections = list({id(sock): sock for sock, _ in links}.values())
    for sock in connections:
        sock.setblocking(False)
        mine = [link for owner, link in links if owner is sock]
        sock.sendall(("[" + ",".join(json.dumps({"jsonrpc": "2.0", "id": link, "method": "framerate.v1.DisplayLink/Update",
                                                  "params": {"link": link, "paused": False}}) for link in mine) + "]\n").encode())
    return connections


def update_batches(args):
    """The per-user limits' worth of links (--links over connections of 60) and watches (64,
    16 a connection, their events read), then batches of 128 Updates of its own links, each
    a new range (so each re-arbitrates and is announced to every watch), replies read."""
    # Paused until every connection is read below.
    links = register_links(args.socket, args.links)
    watchers = []
    for _ in range(4):
        sock = connect(args.socket)
        reader = sock.makefile("rb")
        for ident in range(16):
            reply = call(sock, reader, b'{"jsonrpc":"2.0","id":%d,"method":"framerate.v1.Compositor/Watch"}\n' % (ident + 1))
            if "result" not in reply:
                break
        sock.setblocking(False)
        watchers.append(sock)
    owner = links[0][0]
    own = [link for sock, link in links if sock is owner]
    # Every connection is read: the links tick, and a client that leaves its ticks unread is closed.
    readers = unpause(links) + watchers
    sock = owner
    deadline = time.monotonic() + args.seconds
    sent = received = batches = 0
    pending = memoryview(b"")
    while time.monotonic() < deadline:
        readable, writable, _ = select.select(readers, [sock], [], 0.05)
        if writable and not pending:
            requests = []
            for index in range(128):
                rate = 10 + (batches * 128 + index) % 110
                requests.append(json.dumps({"jsonrpc": "2.0", "id": index + 1, "method": "framerate.v1.DisplayLink/Update",
                                            "params": {"link": own[index % len(own)], "range": {"minimum": rate, "maximum": 120, "preferred": rate}}},
                                           separators=(",", ":")))
            pending = memoryview(("[" + ",".join(requests) + "]\n").encode())
            batches += 1
        if writable:
            rest = send_pending(sock, pending)
            if rest is None:
                break
            sent += len(pending) - len(rest)
            pending = rest
        for ready in readable:
            count = read_chunk(ready, readers)
            if ready is sock:
                received += count
        if sock not in readers:
            break
    print(json.dumps({"links": len(links), "batches": batches, "sent": sent, "received": received}), flush=True)


def unread_connections(args):
    """--connections connections, each sending four GetStates and never reading; a connection
    the daemon closes is replaced, until --seconds."""
    payload = GET_STATE * 4
    sockets, opened = [], 0
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        while len(sockets) < args.connections:
            try:
                sock = connect(args.socket)
                sock.sendall(payload)
                sock.setblocking(False)
            except OSError:
                break
            sockets.append(sock)
            opened += 1
        time.sleep(0.2)
        alive = []
        for sock in sockets:
            try:
                # Whatever the daemon sent is still unread: a closed one shows as an error
                # on peek only once its data is gone, so look for a hang-up instead.
                if select.select([], [], [sock], 0)[2]:
                    raise OSError
                alive.append(sock)
            except OSError:
                sock.close()
        sockets = alive
    print(json.dumps({"opened": opened}), flush=True)


def partial_lines(args):
    """--connections connections, each sending 1 MiB with no newline, in waves until --seconds."""
    chunk = b"x" * 65536
    deadline = time.monotonic() + args.seconds
    waves = closed = 0
    while time.monotonic() < deadline:
        sockets = []
        for _ in range(args.connections):
            try:
                sock = connect(args.socket)
                sock.setblocking(False)
                sockets.append([sock, 1 << 20])
            except OSError:
                break
        while any(left > 0 for _, left in sockets) and time.monotonic() < deadline:
            for entry in sockets:
                sock, left = entry
                if left <= 0:
                    continue
                try:
                    entry[1] -= sock.send(chunk[:min(len(chunk), left)])
                except BlockingIOError:
                    pass
                except OSError:
                    entry[1] = 0
                    closed += 1
            select.select([], [s for s, left in sockets if left > 0], [], 0.01)
        for sock, _ in sockets:
            sock.close()
        waves += 1
    print(json.dumps({"waves": waves, "closed_by_daemon": closed}), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("role")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--links", type=int, default=1000)
    parser.add_argument("--connections", type=int, default=200)
    args = parser.parse_args()
    roles = {
        "victim": victim, "prober": prober, "holder": holder, "watches": watches, "churn": churn,
        "partial-lines": partial_lines, "update-batches": update_batches, "unread-connections": unread_connections,
        "trace-read": lambda a: trace(a, read=True),
        "trace-unread": lambda a: trace(a, read=False),
        "getstate-read": lambda a: flood(a, GET_STATE),
        "getstate-unread": lambda a: flood(a, GET_STATE, read=False),
        "getstate-batch": lambda a: flood(a, GET_STATE, batch=128),
        "health-read": lambda a: flood(a, HEALTH),
        "health-unread": lambda a: flood(a, HEALTH, read=False),
    }
    roles[args.role](args)


if __name__ == "__main__":
    sys.exit(main())
