#!/usr/bin/env python3
"""A client process for the frame-timeline integration tests (issue 14 §1-2), on the
Python client library. Prints one JSON object per line: "registered", each tick
(with targetPresentationTimestamp and timelines), "presented", "error"."""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "clients", "python", "src"))
import framerate  # noqa: E402


def emit(kind, **fields):
    print(json.dumps(dict(kind=kind, **fields)), flush=True)


def tick_fields(tick):
    return dict(sequence=tick.sequence, timestamp=tick.timestamp, targetTimestamp=tick.target_timestamp,
                targetPresentationTimestamp=tick.target_presentation_timestamp, callbackRate=tick.callback_rate,
                refreshRate=tick.refresh_rate, skipped=tick.skipped,
                timelines=[dict(vsyncId=t.vsync_id, deadline=t.deadline, presentationTime=t.presentation_time)
                           for t in tick.timelines])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--socket", required=True)
    parser.add_argument("--min", type=float, default=120)
    parser.add_argument("--max", type=float, default=120)
    parser.add_argument("--preferred", type=float, default=0)
    parser.add_argument("--timelines", type=int, default=1)
    parser.add_argument("--latency", type=int, default=1)
    parser.add_argument("--ticks", type=int, default=40)
    parser.add_argument("--aim", type=int, default=-1, help="the tick (by count) whose frame aims at its timelines[1]")
    parser.add_argument("--present", action="store_true", help="present every tick's frame at once")
    parser.add_argument("--no-frame-done", action="store_true",
                        help="never send FrameDone: the daemon then never skips an interval for an unfinished frame")
    parser.add_argument("--wait-file", default=None, help="print ticks until this file exists, then --ticks more")
    args = parser.parse_args()
    with framerate.connect_blocking(args.socket) as conn:
        try:
            link = conn.register(args.min, args.max, args.preferred, high_frame_rate=True, label="timelines",
                                 timelines=args.timelines, preferred_frame_latency=args.latency)
        except framerate.FrameRateError as error:
            emit("error", status=type(error).__name__, message=str(error), field=getattr(error, "field", None))
            return 0
        emit("registered", link=link.id)
        count = 0
        deadline = time.monotonic() + 20
        while count < args.ticks and time.monotonic() < deadline:
            tick = link.next_tick(timeout=5)
            emit("tick", **tick_fields(tick))
            if args.wait_file and not os.path.exists(args.wait_file):
                continue
            if count == args.aim and len(tick.timelines) > 1:
                link.present(tick.sequence, vsync_id=tick.timelines[1].vsync_id)
                emit("aimed", sequence=tick.sequence, vsyncId=tick.timelines[1].vsync_id,
                     presentationTime=tick.timelines[1].presentation_time)
            elif args.present:
                link.present(tick.sequence)
            elif not args.no_frame_done:
                link.frame_done(tick.sequence)
            for frame in link.presented():
                emit("presented", sequence=frame.sequence, presentedTime=frame.presented_time,
                     expectedTime=frame.expected_time, hitch=frame.hitch, dropped=frame.dropped)
            count += 1
        # Collect the last reports.
        end = time.monotonic() + 1
        while time.monotonic() < end:
            for frame in link.presented():
                emit("presented", sequence=frame.sequence, presentedTime=frame.presented_time,
                     expectedTime=frame.expected_time, hitch=frame.hitch, dropped=frame.dropped)
            time.sleep(0.02)
    return 0


if __name__ == "__main__":
    sys.exit(main())
