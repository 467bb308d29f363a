#!/usr/bin/env python3
"""A raw-socket framerated client for the restart test: one real process holding one
connection with --links display links, reading ticks for --seconds, then printing one
JSON summary line. It never reconnects: a restart that drops the connection shows as
"eof": true.

Per link it checks that every tick's sequence is the previous one's + skipped + 1 (the
rule the daemon keeps across a handover) and reports the ticks with skipped > 0, with
the gap to the previous tick (its timestamp, and when it was received).

With --tick-socket the connection first gets a tick socket (TickSocket/Open, then Attach
on a second connection) and the ticks are read there: the handover must carry both.
"""
import argparse
import json
import select
import socket
import sys
import time

TICK = "framerate.v1.DisplayLink/Tick"


class LineReader:
    """Lines from a socket with plain recv and select (no file object, whose buffer is
    not safe across timeouts)."""

    def __init__(self, sock):
        self.sock = sock
        self.rest = b""

    def line(self, timeout):
        """The next line; b"" when none arrived within `timeout` s; None at end of stream."""
        while b"\n" not in self.rest:
            ready, _, _ = select.select([self.sock], [], [], timeout)
            if not ready:
                return b""
            data = self.sock.recv(1 << 16)
            if not data:
                return None
            self.rest += data
        line, self.rest = self.rest.split(b"\n", 1)
        return line


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--socket", required=True)
    parser.add_argument("--links", type=int, required=True)
    parser.add_argument("--rate", type=float, default=120)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--tick-socket", action="store_true")
    args = parser.parse_args()

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(args.socket)
    reader = LineReader(sock)
    ticks = reader
    if args.tick_socket:
        sock.sendall(b'{"jsonrpc":"2.0","id":0,"method":"framerate.v1.TickSocket/Open"}\n')
        opened = json.loads(reader.line(timeout=10) or b"null")
        if not opened or "result" not in opened:
            print(json.dumps({"error": f"TickSocket/Open: {opened}"}), flush=True)
            return 1
        tick_sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        tick_sock.connect(args.socket)
        attach = {"jsonrpc": "2.0", "id": 0, "method": "framerate.v1.TickSocket/Attach", "params": {"token": opened["result"]["token"]}}
        tick_sock.sendall((json.dumps(attach) + "\n").encode())
        ticks = LineReader(tick_sock)
        attached = json.loads(ticks.line(timeout=10) or b"null")
        if not attached or attached.get("result") != {"attached": True}:
            print(json.dumps({"error": f"TickSocket/Attach: {attached}"}), flush=True)
            return 1
    params = {"range": {"minimum": args.rate, "maximum": args.rate, "preferred": args.rate}, "highFrameRate": True}
    requests = b"".join(
        (json.dumps({"jsonrpc": "2.0", "id": i, "method": "framerate.v1.DisplayLink/Register", "params": params}) + "\n").encode()
        for i in range(1, args.links + 1)
    )
    sock.sendall(requests)
    links = {}
    pending = set(range(1, args.links + 1))
    while pending:
        line = reader.line(timeout=10)
        if line is None:
            print(json.dumps({"error": "connection closed during registration"}), flush=True)
            return 1
        message = json.loads(line)
        if message.get("id") in pending:
            if "error" in message:
                print(json.dumps({"error": message["error"]}), flush=True)
                return 1
            pending.discard(message["id"])
            links[message["result"]["link"]] = {"ticks": 0, "first": None, "last": None, "broken": [], "skips": [], "prev": None}
    print(json.dumps({"registered": sorted(links)}), flush=True)

    eof = False
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        if ticks is not reader:
            # Nothing but ticks comes on the tick socket: the connection must stay open and quiet.
            ready, _, _ = select.select([sock], [], [], 0)
            if ready and reader.line(timeout=0) is None:
                eof = True
                break
        line = ticks.line(timeout=0.2)
        if line is None:
            eof = True
            break
        if line == b"":
            continue
        received = time.monotonic()
        message = json.loads(line)
        if message.get("method") != TICK:
            continue
        tick = message["params"]
        state = links.get(tick["link"])
        if state is None:
            continue
        state["ticks"] += 1
        if state["first"] is None:
            state["first"] = tick["sequence"]
        previous = state["prev"]
        if previous is not None:
            if tick["sequence"] != previous["sequence"] + tick["skipped"] + 1:
                state["broken"].append([previous["sequence"], tick["sequence"], tick["skipped"]])
            if tick["skipped"] > 0:
                state["skips"].append(
                    {
                        "sequence": tick["sequence"],
                        "skipped": tick["skipped"],
                        "gap_ms": round((tick["timestamp"] - previous["timestamp"]) * 1000, 1),
                        "received_gap_ms": round((received - previous["received"]) * 1000, 1),
                    }
                )
        state["last"] = tick["sequence"]
        state["prev"] = {"sequence": tick["sequence"], "timestamp": tick["timestamp"], "received": received}
    for state in links.values():
        del state["prev"]
    print(json.dumps({"summary": {"eof": eof, "links": links}}, separators=(",", ":")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
