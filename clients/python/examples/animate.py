#!/usr/bin/env python3
"""Drive an animation from each tick's target_timestamp, as on iOS:

    let t = link.targetTimestamp - start      // when this frame will be shown
    print(link.targetTimestamp - CACurrentMediaTime())   // working time left

Here `target_timestamp - time.monotonic()` is the working time left for the
frame: both are seconds on CLOCK_MONOTONIC. The ball's position is computed for
the moment the frame is displayed (target_timestamp), not for when the tick
arrived, so the motion stays smooth when frames are skipped.

Each frame is presented (``link.present``); the daemon shows it at the next vsync
and reports when (``link.presented()``). At the end the example prints its hitch
ratio: milliseconds of lateness per second, the display-performance guide's measure
of smoothness (under 5 good, 5-10 noticeable, over 10 bad), as counted here from
the Presented reports and as the daemon reports it in GetState.

    python3 animate.py [--frames N] [--socket PATH]
    python3 animate.py --scroll [--socket PATH]

--scroll simulates a fling of a list that prefers 60 Hz: while the finger "scrolls"
(the first 0.6 s, one event every 50 ms) each event sends a 0.1 s Boost, so the
display holds 120 Hz; the list then decelerates to a stop, the last boost expires,
the callbacks fall back to 60 Hz at once and the panel after the decrease dwell.
Each line shows the refresh rate, the callback rate, the scroll speed and "boosted".
"""

import argparse
import asyncio
import math
import time

import framerate

PERIOD = 2.0  # seconds for one back-and-forth swing
WIDTH = 40    # characters


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=240, help="frames to draw (default 240)")
    parser.add_argument("--socket", help="the daemon's socket (default: found the way framectl finds it)")
    parser.add_argument("--scroll", action="store_true", help="simulate a fling with boosts (see above)")
    args = parser.parse_args()
    if args.scroll:
        await scroll(args.socket)
        return

    async with framerate.connect(args.socket) as conn:
        # A scrolling-style hint: 80-120 Hz, 120 preferred; the entitlement lifts the 60 Hz phone limit.
        link = await conn.register(80, 120, 120, label="animate.py", high_frame_rate=True)
        start = None
        frames = 0
        hitch_seconds = 0.0
        late = 0
        async for tick in link:
            if start is None:
                start = tick.timestamp
            shown_at = tick.target_timestamp - start          # animation time of this frame
            x = (math.sin(2 * math.pi * shown_at / PERIOD) + 1) / 2
            left_ms = (tick.target_timestamp - time.monotonic()) * 1000   # working time left
            row = [" "] * (WIDTH + 1)
            row[round(x * WIDTH)] = "o"
            skipped = f" (skipped {tick.skipped})" if tick.skipped else ""
            print(f"frame {tick.sequence:5d} {tick.callback_rate:5.1f} Hz |{''.join(row)}| {left_ms:6.2f} ms left{skipped}",
                  flush=True)
            await link.present(tick.sequence)   # the frame is done: show it (counts as frame_done for pacing)
            for shown in link.presented():
                hitch_seconds += shown.hitch
                late += shown.hitch > 0
            frames += 1
            if frames >= args.frames:
                break
        elapsed = tick.timestamp - start if start is not None else 0.0
        state = await conn.state()
        daemon = next((l.get("hitches") for d in state["displays"] for l in d["links"] if l["link"] == link.daemon_id), None)
        await link.invalidate()
        ratio = hitch_seconds * 1000 / elapsed if elapsed > 0 else 0.0
        verdict = "good" if ratio < 5 else "noticeable" if ratio <= 10 else "bad"
        print(f"hitch ratio: {ratio:.1f} ms/s ({verdict}): {late} late frames, {hitch_seconds * 1000:.1f} ms of hitches in {elapsed:.1f} s")
        if daemon:
            print(f"the daemon's count: {daemon['ratioMsPerS']:.1f} ms/s over the last {daemon['window']:.0f} s, "
                  f"{daemon['frames']} frames, {daemon['late']} late, {daemon['dropped']} dropped")


async def scroll(socket) -> None:
    """A list at 60 Hz, boosted to its 120 Hz maximum while the finger moves."""
    async with framerate.connect(socket) as conn:
        link = await conn.register(10, 120, 60, label="animate.py scroll", high_frame_rate=True)
        start = time.monotonic()
        next_event = start
        speed = 2000.0   # points per second at the start of the fling
        async for tick in link:
            elapsed = tick.timestamp - start
            if elapsed < 0.6 and time.monotonic() >= next_event:
                await link.boost(0.1)          # one boost per scroll event: never shortens the last one
                next_event += 0.05
            elif elapsed >= 0.6:
                speed = max(0.0, speed - 4000.0 * tick.duration * (tick.refresh_rate / tick.callback_rate))
            state = "boosted" if tick.boosted else ""
            print(f"{elapsed:6.3f} s  panel {tick.refresh_rate:5.1f} Hz  callbacks {tick.callback_rate:5.1f} Hz  "
                  f"speed {speed:6.0f} pt/s  {state}", flush=True)
            await link.frame_done(tick.sequence)
            if elapsed > 1.6:
                break
        await link.invalidate()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except (framerate.DaemonNotRunning, framerate.UntrustedDaemon) as error:
        raise SystemExit(str(error))
    except KeyboardInterrupt:
        pass
