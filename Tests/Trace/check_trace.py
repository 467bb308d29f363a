#!/usr/bin/env python3
"""framectl trace, checked with Perfetto's own published protos.

Runs against a daemon on SOCKET: a client registers a 60 Hz link, presents every
frame (one 45 ms late), and changes its range twice so the display changes rate; meanwhile
`framectl trace --duration 2.5` records. The file must decode as a perfetto.protos.Trace
whose packets are on CLOCK_MONOTONIC, and its counts must match what happened: the tick
slices of the link are exactly the ticks the client received in that span, every tick
begins on a vsync instant, the counter track changes as often as the client saw the
refresh rate change (Watch events), and the late frame is marked as a hitch.

Usage: check_trace.py FRAMECTL SOCKET OUTPUT_DIR
"""
import json
import os
import socket
import subprocess
import sys
import threading
import time

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

FRAMECTL, SOCKET, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
TRACE_FILE = os.path.join(OUT, "framerated.pftrace")


class Client:
    def __init__(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(SOCKET)
        self.file = self.sock.makefile("rwb", buffering=0)
        self.next_id = 0

    def send(self, method, params=None, notify=False):
        message = {"jsonrpc": "2.0", "method": "framerate.v1." + method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        self.file.write(json.dumps(message).encode() + b"\n")
        return None if notify else self.next_id

    def read(self):
        line = self.file.readline()
        if not line:
            raise RuntimeError("daemon closed the connection")
        return json.loads(line)


def main():
    watcher = Client()
    watcher.send("Compositor/Watch")
    rate_changes = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            try:
                message = watcher.read()
            except (OSError, RuntimeError, ValueError):
                return
            params = message.get("params") or {}
            if params.get("kind") == "refreshRateChanged":
                rate_changes.append((time.monotonic(), params["from"], params["to"]))

    threading.Thread(target=watch, daemon=True).start()

    app = Client()
    register = app.send("DisplayLink/Register", {"range": {"minimum": 60, "maximum": 60, "preferred": 60}, "label": "tracecheck"})
    link = None
    ticks = {}
    presented = []
    while link is None:
        message = app.read()
        if message.get("id") == register:
            link = message["result"]["link"]
    tracer = subprocess.Popen([FRAMECTL, "trace", "--socket", SOCKET, "--duration", "2.5", "-o", TRACE_FILE],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    began = time.monotonic()
    phase = 0
    stalled = False
    while time.monotonic() - began < 3.5:
        message = app.read()
        method = message.get("method", "")
        if method.endswith("/Tick"):
            tick = message["params"]
            ticks[tick["sequence"]] = tick
            if not stalled and time.monotonic() - began > 1.0:
                stalled = True
                time.sleep(0.045)
            app.send("DisplayLink/Present", {"link": link, "sequence": tick["sequence"]}, notify=True)
        elif method.endswith("/Presented"):
            presented.append(message["params"])
        elapsed = time.monotonic() - began
        if phase == 0 and elapsed > 0.8:
            phase = 1
            app.send("DisplayLink/Update", {"link": link, "range": {"minimum": 30, "maximum": 30, "preferred": 30}})
        elif phase == 1 and elapsed > 1.6:
            phase = 2
            app.send("DisplayLink/Update", {"link": link, "range": {"minimum": 60, "maximum": 60, "preferred": 60}})
    out, err = tracer.communicate(timeout=30)
    stop.set()
    sys.stderr.write(err.decode())
    assert tracer.returncode == 0, f"framectl trace failed: {err.decode()}"

    trace = pb.Trace()
    with open(TRACE_FILE, "rb") as handle:
        trace.ParseFromString(handle.read())
    assert len(trace.packet) > 0, "no packets"

    tracks = {}
    for packet in trace.packet:
        if packet.HasField("track_descriptor"):
            tracks[packet.track_descriptor.uuid] = packet.track_descriptor
    link_tracks = [uuid for uuid, track in tracks.items() if track.name.endswith(f"(link {link})")]
    assert len(link_tracks) == 1, f"one track for link {link}: {[t.name for t in tracks.values()]}"
    link_track = link_tracks[0]
    name = tracks[link_track].name
    assert f"pid {os.getpid()}" in name and "'tracecheck'" in name, name
    rate_tracks = [uuid for uuid, track in tracks.items() if track.HasField("counter")]
    assert len(rate_tracks) == 1 and tracks[rate_tracks[0]].counter.unit_name == "Hz"

    slices, vsyncs, counters, hitches, presents, presenteds = [], set(), [], [], 0, 0
    for packet in trace.packet:
        if not packet.HasField("track_event"):
            continue
        assert packet.timestamp_clock_id == pb.BUILTIN_CLOCK_MONOTONIC
        event = packet.track_event
        if event.type == pb.TrackEvent.TYPE_SLICE_BEGIN and event.track_uuid == link_track:
            sequence = [a.uint_value for a in event.debug_annotations if a.name == "sequence"][0]
            slices.append((packet.timestamp, sequence))
        elif event.type == pb.TrackEvent.TYPE_INSTANT and event.name == "vsync":
            vsyncs.add(packet.timestamp)
        elif event.type == pb.TrackEvent.TYPE_COUNTER:
            counters.append((packet.timestamp, event.double_counter_value))
        elif event.type == pb.TrackEvent.TYPE_SLICE_BEGIN and event.name.startswith("hitch"):
            hitches.append(event.name)
        elif event.type == pb.TrackEvent.TYPE_INSTANT and event.name.startswith("Present ") and event.track_uuid == link_track:
            presents += 1
            assert len(event.flow_ids) == 1
        elif event.type == pb.TrackEvent.TYPE_INSTANT and event.name.startswith("Presented ") and event.track_uuid == link_track:
            presenteds += 1

    # Ticks: the traced ones are exactly those the client received between the first and last traced.
    traced = sorted(sequence for _, sequence in slices)
    assert traced, "no tick slices"
    received = sorted(s for s in ticks if traced[0] <= s <= traced[-1])
    assert traced == received, f"traced {len(traced)} ticks, the client received {len(received)} in that span"
    for timestamp, sequence in slices:
        assert round(ticks[sequence]["timestamp"] * 1e9) == timestamp, (sequence, timestamp)
        assert timestamp in vsyncs, f"tick {sequence} does not begin on a traced vsync"
    # Rate changes: the counter's changes are the Watch's refreshRateChanged events.
    changes = [b for a, b in zip(counters, counters[1:]) if a[1] != b[1]]
    assert len(changes) == len(rate_changes) >= 2, f"counter changes {changes}, watch saw {rate_changes}"
    assert [value for _, value in changes] == [to for _, _, to in rate_changes]
    # The stalled frame: one hitch marked.
    late = [p for p in presented if p["hitch"] > 0]
    assert len(hitches) >= 1 and len(hitches) == len([p for p in late if p["sequence"] in traced]), (hitches, late)
    assert presents > 0 and presenteds > 0
    print(f"trace ok: {len(trace.packet)} packets, {len(traced)} ticks, {len(vsyncs)} vsyncs, "
          f"{len(changes)} rate changes, {len(hitches)} hitches, {presents} presents")


if __name__ == "__main__":
    main()
