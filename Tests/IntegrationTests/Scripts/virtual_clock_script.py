#!/usr/bin/env python3
"""A causally ordered client script for a `framerated --clock virtual` daemon.

Every request is sent in reaction to a line the daemon sent, on one connection per
role (W watches, A holds the links), and no request is sent on one connection while a
reply is awaited on the other. Every line each connection receives is recorded, in
order, to --out ("W <line>" / "A <line>"), for the determinism test, which runs this
script twice against fresh daemons and compares the bytes. A one-line JSON summary is
printed on stdout.

The scenario, in virtual time from the epoch:
  - W watches; A registers link 1 (120 Hz, high frame rate) and link 2 (30 Hz), one after
    the other's reply, or with --pipelined both in one write (the same bytes must result);
  - link 1 answers each tick with FrameDone, link 2 with Present;
  - at the first tick of link 1 at or after epoch + 2 s, link 2 is updated to 60 Hz;
  - at the first tick of link 1 at or after epoch + --seconds, both links are
    invalidated, time is advanced 3 s (the display idles), and A asks GetState;
  - W unwatches (its reply follows every event the daemon wrote before it).
"""
import argparse
import json
import socket


class Connection:
    def __init__(self, path, name, record):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.name = name
        self.record = record
        self.buffer = b""
        self.last_id = 0
        self.pending = []  # notifications read while waiting for a reply

    def send(self, method, params=None, notify=False):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.last_id += 1
            message["id"] = self.last_id
        self.sock.sendall(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        return None if notify else self.last_id

    def read_line(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError(f"connection {self.name} closed by the daemon")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        self.record.append(self.name.encode() + b" " + line)
        return json.loads(line)

    def call(self, method, params=None):
        identifier = self.send(method, params)
        while True:
            message = self.read_line()
            if message.get("id") == identifier:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            self.pending.append(message)

    def next_notification(self):
        if self.pending:
            return self.pending.pop(0)
        return self.read_line()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--socket", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--epoch", type=float, default=1000.0)
    parser.add_argument("--pipelined", action="store_true", help="send both registrations in one write")
    arguments = parser.parse_args()

    record = []
    watcher = Connection(arguments.socket, "W", record)
    watch = watcher.call("framerate.v1.Compositor/Watch")["watch"]
    app = Connection(arguments.socket, "A", record)
    fast_params = {"range": {"minimum": 120, "maximum": 120, "preferred": 120}, "highFrameRate": True, "label": "fast"}
    slow_params = {"range": {"minimum": 30, "maximum": 30, "preferred": 30}, "label": "slow"}
    if arguments.pipelined:
        # Both registrations in one write: the daemon must still handle them exactly as
        # if the second were sent after the first one's reply (time moves between lines).
        app.sock.sendall(b"".join(
            json.dumps({"jsonrpc": "2.0", "id": identifier, "method": "framerate.v1.DisplayLink/Register", "params": params},
                       separators=(",", ":")).encode() + b"\n"
            for identifier, params in ((1, fast_params), (2, slow_params))))
        app.last_id = 2
        results = {}
        while len(results) < 2:
            message = app.read_line()
            if message.get("id") in (1, 2):
                results[message["id"]] = message["result"]
            else:
                app.pending.append(message)
        fast, slow = results[1]["link"], results[2]["link"]
    else:
        fast = app.call("framerate.v1.DisplayLink/Register", fast_params)["link"]
        slow = app.call("framerate.v1.DisplayLink/Register", slow_params)["link"]

    ticks = {fast: 0, slow: 0}
    skipped = {fast: 0, slow: 0}
    presented = 0
    hitch = 0.0
    updated = False
    last_timestamp = None
    while True:
        message = app.next_notification()
        method = message.get("method")
        if method == "framerate.v1.DisplayLink/Presented":
            presented += 1
            hitch += message["params"]["hitch"]
            continue
        if method != "framerate.v1.DisplayLink/Tick":
            continue
        tick = message["params"]
        link, sequence, timestamp = tick["link"], tick["sequence"], tick["timestamp"]
        if link == fast and timestamp >= arguments.epoch + arguments.seconds:
            last_timestamp = timestamp
            break
        ticks[link] += 1
        skipped[link] += tick["skipped"]
        if link == fast and not updated and timestamp >= arguments.epoch + 2:
            updated = True
            app.call("framerate.v1.DisplayLink/Update", {"link": slow, "range": {"minimum": 60, "maximum": 60, "preferred": 60}})
        if link == fast:
            app.call("framerate.v1.DisplayLink/FrameDone", {"link": fast, "sequence": sequence})
        else:
            app.call("framerate.v1.DisplayLink/Present", {"link": slow, "sequence": sequence})

    app.call("framerate.v1.DisplayLink/Invalidate", {"link": fast})
    app.call("framerate.v1.DisplayLink/Invalidate", {"link": slow})
    now = app.call("framerate.v1.Compositor/Advance", {"seconds": 3})["now"]
    state = app.call("framerate.v1.Compositor/GetState")
    watcher.call("framerate.v1.Compositor/Unwatch", {"watch": watch})

    with open(arguments.out, "wb") as out:
        out.write(b"\n".join(record) + b"\n")
    print(json.dumps({
        "fastTicks": ticks[fast], "slowTicks": ticks[slow], "fastSkipped": skipped[fast], "slowSkipped": skipped[slow],
        "presented": presented, "hitch": round(hitch, 9), "lastTimestamp": last_timestamp, "advancedTo": now,
        "clock": state.get("clock"), "now": state.get("now"), "refreshRate": state["displays"][0]["refreshRate"],
        "lines": len(record),
    }))


if __name__ == "__main__":
    main()
