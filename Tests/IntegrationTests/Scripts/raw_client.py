#!/usr/bin/env python3
"""A raw-socket framerated client for the integration tests: a real, separate
process that speaks newline-delimited JSON-RPC without any client library.

Modes:
  ticks  register a link, read ticks for --seconds, print one JSON line per tick
         then a summary line {"summary": {...}}
  hold   register a link, print the Register result, then read and discard
         forever (until killed)
  stall  register a link, print the Register result, then never read again

With --frame-ms N (ticks mode) each tick is a frame that takes N ms: the client sleeps
that long after reading it, then sends FrameDone. --adaptive registers with adaptive.
With --velocity T:V,T:V,... (ticks mode) each tick is a frame reported at once with
FrameDone carrying contentVelocity V (points/s) from T seconds after the first tick on.
"""
import argparse
import json
import socket
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["ticks", "hold", "stall"])
    parser.add_argument("--socket", required=True)
    parser.add_argument("--min", type=float, required=True)
    parser.add_argument("--max", type=float, required=True)
    parser.add_argument("--preferred", type=float, default=0)
    parser.add_argument("--entitled", action="store_true")
    parser.add_argument("--label", default=None)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--receive-buffer", type=int, default=0)
    parser.add_argument("--adaptive", action="store_true")
    parser.add_argument("--frame-ms", type=float, default=0)
    parser.add_argument("--velocity", default=None)
    args = parser.parse_args()
    schedule = [tuple(float(x) for x in step.split(":")) for step in args.velocity.split(",")] if args.velocity else []

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if args.receive_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, args.receive_buffer)
    sock.connect(args.socket)
    stream = sock.makefile("rb")
    params = {
        "range": {"minimum": args.min, "maximum": args.max, "preferred": args.preferred},
        "highFrameRate": args.entitled,
    }
    if args.label:
        params["label"] = args.label
    if args.adaptive:
        params["adaptive"] = True
    request = {"jsonrpc": "2.0", "id": 1, "method": "framerate.v1.DisplayLink/Register", "params": params}
    sock.sendall((json.dumps(request, separators=(",", ":")) + "\n").encode())
    reply = json.loads(stream.readline())
    if "error" in reply:
        print(json.dumps({"error": reply["error"]}), flush=True)
        return 1
    print(json.dumps({"registered": reply["result"]}), flush=True)

    if args.mode == "stall":
        while True:
            time.sleep(3600)
    if args.mode == "hold":
        while stream.readline():
            pass
        return 0

    deadline = time.monotonic() + args.seconds
    count = 0
    first_tick = None
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        message = json.loads(line)
        if message.get("method") != "framerate.v1.DisplayLink/Tick":
            continue
        tick = message["params"]
        tick["receivedAt"] = time.monotonic()
        count += 1
        print(json.dumps(tick, separators=(",", ":")), flush=True)
        if args.frame_ms > 0:
            time.sleep(args.frame_ms / 1000)
            done = {"jsonrpc": "2.0", "method": "framerate.v1.DisplayLink/FrameDone",
                    "params": {"link": tick["link"], "sequence": tick["sequence"]}}
            sock.sendall((json.dumps(done, separators=(",", ":")) + "\n").encode())
        elif schedule:
            first_tick = tick["receivedAt"] if first_tick is None else first_tick
            elapsed = tick["receivedAt"] - first_tick
            velocity = [v for (t, v) in schedule if t <= elapsed][-1]
            done = {"jsonrpc": "2.0", "method": "framerate.v1.DisplayLink/FrameDone",
                    "params": {"link": tick["link"], "sequence": tick["sequence"], "contentVelocity": velocity}}
            sock.sendall((json.dumps(done, separators=(",", ":")) + "\n").encode())
    print(json.dumps({"summary": {"ticks": count, "seconds": args.seconds}}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
