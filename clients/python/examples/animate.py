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

--scroll simulates a fling of a list whose animation prefers 120 Hz (80-120):
  1. while the finger "scrolls" (the first 0.6 s, one event every 50 ms) each event
     sends a 0.1 s Boost, so the panel holds 120 Hz whatever the content's speed;
  2. the finger lifts and the list decelerates as UIScrollView does (the speed falls by
     a factor 0.9985 a millisecond), each frame reporting its speed as contentVelocity:
     the panel follows the phone's velocity table (above 320 pt/s 120 Hz, up to 320
     80 Hz, up to 160 60 Hz, each step down after the 250 ms dwell) while the callbacks
     stay at 120 Hz;
  3. the list stops: the link is paused, no link votes, and after the idle timeout
     (1 s) and the dwell the display idles at its lowest rate.
A line is printed whenever the panel rate, the callback rate or "boosted" changes.
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
    """A fling: boosts while the finger moves, then contentVelocity decelerating to a stop, then idle."""
    async with framerate.connect(socket) as conn:
        link = await conn.register(80, 120, 120, label="animate.py scroll", high_frame_rate=True)
        start = time.monotonic()
        next_event = start
        finger = 1500.0     # the finger's speed while it scrolls, points per second
        speed = 2000.0      # the list's speed when the finger lifts
        lifted = None       # when the finger lifted (CLOCK_MONOTONIC seconds)
        shown = None
        async for tick in link:
            elapsed = tick.timestamp - start
            if elapsed < 0.6:
                if time.monotonic() >= next_event:
                    await link.boost(0.1)          # one boost per scroll event: never shortens the last one
                    next_event += 0.05
                velocity = finger
            else:
                lifted = tick.timestamp if lifted is None else lifted
                speed = 2000.0 * 0.9985 ** ((tick.timestamp - lifted) * 1000)
                velocity = speed
            line = (tick.refresh_rate, tick.callback_rate, tick.boosted)
            if line != shown:
                shown = line
                phase = "scrolling" if elapsed < 0.6 else "decelerating"
                print(f"{elapsed:6.3f} s  panel {tick.refresh_rate:5.1f} Hz  callbacks {tick.callback_rate:5.1f} Hz  "
                      f"{phase}, {velocity:6.0f} pt/s  {'boosted' if tick.boosted else ''}", flush=True)
            if velocity < 10:
                break                              # the list has stopped
            await link.frame_done(tick.sequence, content_velocity=velocity)
        stopped = time.monotonic() - start
        print(f"{stopped:6.3f} s  the list stopped: link paused, no link votes", flush=True)
        await link.pause()
        rate = None
        while time.monotonic() - start < stopped + 1.6:
            display = (await conn.state()).displays[0]
            panel = display.panel_rate if display.panel_rate is not None else display.refresh_rate
            if panel != rate:
                rate = panel
                print(f"{time.monotonic() - start:6.3f} s  panel {panel:5.1f} Hz  {display.reason}", flush=True)
            await asyncio.sleep(0.05)
        await link.invalidate()

if __name__ == "__main__":
    try:
        asyncio.run(main())
    except (framerate.DaemonNotRunning, framerate.UntrustedDaemon) as error:
        raise SystemExit(str(error))
    except KeyboardInterrupt:
        pass
