#!/usr/bin/env python3
"""Turns the raw outputs of Tests/Benchmarks/run.sh into the markdown tables of
docs/performance.md: medians over the repeats, ratios to the C floor of the same run."""
import json
import os
import re
import statistics
import sys

out, ns, repeat = sys.argv[1], [int(n) for n in sys.argv[2].split()], int(sys.argv[3])


def last_line_fields(path, prefix):
    """key=value fields of the instrument's last line starting with `prefix`."""
    try:
        lines = [l for l in open(path) if l.startswith(prefix)]
    except OSError:
        return None
    if not lines:
        return None
    return {k: float(v) for k, v in re.findall(r"(\w+)=([-0-9.]+)", lines[-1])}


def floor_reader_us_per_tick(path):
    """The floor's reader processes' CPU per received tick, µs: client_cpu_pct over the window
    divided by the ticks received (the `# window=.. received=..` line before the last one)."""
    last = last_line_fields(path, "fanout")
    counts = last_line_fields(path, "# window=")
    if not last or not counts or not counts.get("received") or "client_cpu_pct" not in last:
        return None
    return last["client_cpu_pct"] / 100 * counts["window"] / counts["received"] * 1e6


def generator_us_per_tick(f):
    """framebench's worker processes' CPU per received tick, µs (older reports lack it)."""
    value = f.get("generator", {}).get("us_per_tick")
    if value is None and f["ticks"]["received"]:
        value = f["generator"]["cpu_pct"] / 100 * f["duration"] / f["ticks"]["received"] * 1e6
    return value


def load_json(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, digits=0):
    if value is None:
        return "–"
    return f"{value:,.{digits}f}"


def ratio(a, b):
    return f"{a / b:.2f}×" if a is not None and b else "–"


rows = []
for n in ns:
    floors = [last_line_fields(f"{out}/floor-{n}-{r}.txt", "fanout") for r in range(1, repeat + 1)]
    dbuses = [last_line_fields(f"{out}/dbus-{n}-{r}.txt", "dbus") for r in range(1, repeat + 1)]
    fbs = [load_json(f"{out}/framebench-{n}-{r}.json") for r in range(1, repeat + 1)]
    floors = [f for f in floors if f]
    dbuses = [d for d in dbuses if d]
    fbs = [f for f in fbs if f]
    row = {"n": n, "runs": len(fbs)}
    row["floor_p50"] = med([f["p50_us"] for f in floors])
    row["floor_p99"] = med([f["p99_us"] for f in floors])
    row["floor_cpu"] = med([f["server_cpu_pct"] for f in floors])
    row["floor_drops"] = med([f.get("lost", f["drops"]) for f in floors])
    row["floor_reader_cpu"] = med([f.get("client_cpu_pct") for f in floors])
    row["floor_reader_tick"] = med([floor_reader_us_per_tick(f"{out}/floor-{n}-{r}.txt") for r in range(1, repeat + 1)])
    row["dbus_p99"] = med([d["p99_us"] for d in dbuses])
    row["dbus_cpu"] = med([d["bus_cpu_pct"] for d in dbuses])
    row["dbus_lost"] = med([d["lost"] for d in dbuses])
    row["p50"] = med([f["latency_us"]["p50"] for f in fbs])
    row["p99"] = med([f["latency_us"]["p99"] for f in fbs])
    row["p999"] = med([f["latency_us"]["p999"] for f in fbs])
    row["dropped"] = med([f["ticks"]["dropped"] for f in fbs])
    row["expected"] = med([f["ticks"]["expected"] for f in fbs])
    row["cpu"] = med([f["daemon"]["cpu_pct"] for f in fbs])
    row["tick_cpu"] = med([f["daemon"].get("tick_plane_cpu_pct") for f in fbs])
    row["rss"] = med([f["daemon"]["rss_kib"] for f in fbs])
    row["gen"] = med([f["generator"]["cpu_pct"] for f in fbs])
    row["gen_tick"] = med([generator_us_per_tick(f) for f in fbs])
    row["gen_batch"] = med([f.get("generator", {}).get("ticks_per_wakeup") for f in fbs])
    row["link_min"] = med([f["ticks"]["per_link_min"] for f in fbs])
    row["link_max"] = med([f["ticks"]["per_link_max"] for f in fbs])
    row["ctl_p99"] = med([max(f["control_us"]["register"]["p99"], f["control_us"]["health"]["p99"]) for f in fbs])
    rows.append(row)

print()
print(f"Medians of {repeat} runs; latency in µs (receipt − tick timestamp); CPU in % of one core. Daemon CPU: the "
      "whole process (what §2 compares), which also answers framebench's control probes; tick plane CPU: its `fanout-*` "
      "threads alone, the part that does what the floor's server does. Generator CPU: "
      "framebench's worker processes (its receive path), and per received tick, beside the floor's C readers.")
print()
print("| N | floor p50 / p99 | floor CPU | floor lost | framerated p50 / p99 / p99.9 | p99 vs floor | daemon CPU | CPU vs floor "
      "| tick plane CPU (vs floor) | dropped / expected | per-link min–max | daemon RSS KiB | generator CPU (µs/tick) | floor reader CPU (µs/tick) "
      "| generator vs floor reader per tick | generator ticks per wake-up | control p99 | D-Bus p99 / bus CPU |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    dbus = f"{fmt(r['dbus_p99'])} / {fmt(r['dbus_cpu'], 1)} %" if r["dbus_p99"] is not None else "not run"
    print(f"| {r['n']:,} | {fmt(r['floor_p50'])} / {fmt(r['floor_p99'])} | {fmt(r['floor_cpu'], 1)} % | {fmt(r['floor_drops'])} "
          f"| {fmt(r['p50'])} / {fmt(r['p99'])} / {fmt(r['p999'])} | {ratio(r['p99'], r['floor_p99'])} "
          f"| {fmt(r['cpu'], 1)} % | {ratio(r['cpu'], r['floor_cpu'])} | {fmt(r['tick_cpu'], 1)} % ({ratio(r['tick_cpu'], r['floor_cpu'])}) "
          f"| {fmt(r['dropped'])} / {fmt(r['expected'])} "
          f"| {fmt(r['link_min'])}–{fmt(r['link_max'])} | {fmt(r['rss'])} | {fmt(r['gen'], 1)} % ({fmt(r['gen_tick'], 2)}) "
          f"| {fmt(r['floor_reader_cpu'], 1)} % ({fmt(r['floor_reader_tick'], 2)}) | {ratio(r['gen_tick'], r['floor_reader_tick'])} | {fmt(r['gen_batch'], 1)} "
          f"| {fmt(r['ctl_p99'])} µs | {dbus} |")

# §2 round by round: each round's framerated run against the floor run of the same round
# (run.sh alternates which goes first). On a VM whose speed drifts between rounds, a ratio of two
# medians can pair a fast round with a slow one; the paired ratios and their spread show
# how firm a verdict at 1.0× is.
paired = []
for n in ns:
    for r in range(1, repeat + 1):
        floor = last_line_fields(f"{out}/floor-{n}-{r}.txt", "fanout")
        f = load_json(f"{out}/framebench-{n}-{r}.json")
        if not floor or not f:
            continue
        floor_cpu = floor.get("server_cpu_pct")
        tick_cpu = f["daemon"].get("tick_plane_cpu_pct")
        reader = floor_reader_us_per_tick(f"{out}/floor-{n}-{r}.txt")
        generator = generator_us_per_tick(f)
        paired.append({
            "n": n, "round": r,
            "p99": f["latency_us"]["p99"] / floor["p99_us"] if floor.get("p99_us") else None,
            "cpu": f["daemon"]["cpu_pct"] / floor_cpu if floor_cpu else None,
            "tick": tick_cpu / floor_cpu if floor_cpu and tick_cpu is not None else None,
            "gen": generator / reader if reader and generator is not None else None,
            "dropped": f["ticks"]["dropped"], "floor_lost": floor.get("lost", floor.get("drops")),
        })


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    return f"{statistics.median(values):.2f}× ({min(values):.2f}–{max(values):.2f})"


if paired:
    print()
    print("Round by round: each framerated run against the floor run of the same round, and per N the median of those "
          "paired ratios over the rounds with both runs, with their range (the figures §2 is judged on are the ratios "
          "of medians above).")
    print()
    print("| N | round | p99 vs floor | daemon CPU vs floor | tick plane vs floor | generator vs floor reader per tick | dropped (floor lost) |")
    print("|---|---|---|---|---|---|---|")
    def x(v):
        return f"{v:.2f}×" if v is not None else "–"
    for n in ns:
        rounds = [p for p in paired if p["n"] == n]
        for p in rounds:
            print(f"| {p['n']:,} | {p['round']} | {x(p['p99'])} | {x(p['cpu'])} | {x(p['tick'])} | {x(p['gen'])} "
                  f"| {fmt(p['dropped'])} ({fmt(p['floor_lost'])}) |")
        if rounds:
            print(f"| {n:,} | **median of {len(rounds)} (range)** | {spread([p['p99'] for p in rounds])} | {spread([p['cpu'] for p in rounds])} "
                  f"| {spread([p['tick'] for p in rounds])} | {spread([p['gen'] for p in rounds])} | |")

# The floor's reader beside a server that listens (run.sh, listening_floor.c): the same floor
# with its server's socket ends also watched for input, as a daemon's connections must be.
# Paired by round with the plain floor and with framebench, like the table above.
listening = []
for n in ns:
    rounds = []
    for r in range(1, repeat + 1):
        path = f"{out}/floor-listening-{n}-{r}.txt"
        if not os.path.exists(path):
            continue
        heard = floor_reader_us_per_tick(path)
        plain = floor_reader_us_per_tick(f"{out}/floor-{n}-{r}.txt")
        f = load_json(f"{out}/framebench-{n}-{r}.json")
        generator = generator_us_per_tick(f) if f else None
        server = last_line_fields(path, "fanout")
        rounds.append({
            "heard": heard, "plain": plain, "generator": generator,
            "server_cpu": server.get("server_cpu_pct") if server else None,
            "lost": server.get("lost", server.get("drops")) if server else None,
            "increase": heard / plain if heard and plain else None,
            "gen": generator / heard if heard and generator is not None else None,
        })
    if rounds:
        listening.append((n, rounds))
skipped_listening = os.path.join(out, "floor-listening.skipped")
if listening:
    print()
    print("The floor's reader beside a server that listens: the floor run once more in each round with its server's "
          "socket ends also in an epoll set watched for input, as a daemon's connections must be (Tests/Benchmarks/"
          "listening_floor.c, preloaded; nothing else changes). A reader's read then also wakes the server's end "
          "(unix_write_space). Medians over the rounds; ratios paired by round with their range. §2 is judged against "
          "the plain floor's reader, in the tables above.")
    print()
    print("| N | floor reader µs/tick, server not listening | floor reader µs/tick, server listening | listening vs not "
          "| listening floor's server CPU (lost) | generator µs/tick | generator vs the listening floor's reader |")
    print("|---|---|---|---|---|---|---|")
    for n, rounds in listening:
        print(f"| {n:,} | {fmt(med([x['plain'] for x in rounds]), 2)} | {fmt(med([x['heard'] for x in rounds]), 2)} "
              f"| {spread([x['increase'] for x in rounds])} | {fmt(med([x['server_cpu'] for x in rounds]), 1)} % "
              f"({fmt(med([x['lost'] for x in rounds]))}) | {fmt(med([x['generator'] for x in rounds]), 2)} "
              f"| {spread([x['gen'] for x in rounds])} |")
elif os.path.exists(skipped_listening):
    print()
    print(f"The floor with a listening server was not run: {open(skipped_listening).read().strip()}.")

baseline = []
for n in ns:
    fbs = [load_json(f"{out}/baseline-{n}-{r}.json") for r in range(1, repeat + 1)]
    fbs = [f for f in fbs if f]
    if fbs:
        baseline.append((n, fbs))
if baseline:
    print()
    print("Baseline (BASELINE=, the same runs): medians.")
    print()
    print("| N | p50 / p99 / p99.9 | dropped / expected | daemon CPU | control p99 |")
    print("|---|---|---|---|---|")
    for n, fbs in baseline:
        print(f"| {n:,} | {fmt(med([f['latency_us']['p50'] for f in fbs]))} / {fmt(med([f['latency_us']['p99'] for f in fbs]))} "
              f"/ {fmt(med([f['latency_us']['p999'] for f in fbs]))} | {fmt(med([f['ticks']['dropped'] for f in fbs]))} "
              f"/ {fmt(med([f['ticks']['expected'] for f in fbs]))} | {fmt(med([f['daemon']['cpu_pct'] for f in fbs]), 1)} % "
              f"| {fmt(med([max(f['control_us']['register']['p99'], f['control_us']['health']['p99']) for f in fbs]))} µs |")

def load_row(f):
    rate = f["ticks"]["received"] / f["duration"] if f["duration"] else 0
    per_tick = f["daemon"]["cpu_pct"] / 100 / rate * 1e6 if rate else None
    return (f"{fmt(f['latency_us']['p50'])} / {fmt(f['latency_us']['p99'])} / {fmt(f['latency_us']['p999'])} "
            f"| {fmt(f['ticks']['dropped'])} / {fmt(f['ticks']['expected'])} | {f['daemon']['cpu_pct']:.1f} % | {fmt(per_tick, 2)}")


sends = [(n, load_json(f"{out}/sendcalls-{n}.json")) for n in (1000, 2000)]
if any(f for _, f in sends):
    print()
    print("The send path: one run each with `--tick-sends send` (one send(2) per connection), beside the medians "
          "above (one io_uring submission per vsync).")
    print()
    print("| N | sends | p50 / p99 / p99.9 µs | dropped / expected | daemon CPU | daemon µs per tick |")
    print("|---|---|---|---|---|---|")
    for n, f in sends:
        if f:
            print(f"| {n:,} | send(2) | {load_row(f)} |")

scaling = [(n, k, load_json(f"{out}/scaling-{n}-{k}.json")) for n in (2000, 4000) for k in (1, 2)]
if any(f for _, _, f in scaling):
    print()
    print("Fan-out threads under taskset: one thread on CPU 1 against two threads on CPUs 0–1, one run each; the "
          "generator is not pinned.")
    print()
    print("| N | fan-out threads (CPUs) | p50 / p99 / p99.9 µs | dropped / expected | daemon CPU | daemon µs per tick |")
    print("|---|---|---|---|---|---|")
    for n, k, f in scaling:
        if f:
            print(f"| {n:,} | {k} ({'1' if k == 1 else '0,1'}) | {load_row(f)} |")

print()
print("Links per connection (1,000 links at 120 Hz): daemon CPU per delivered tick.")
print()
print("| connections | links each | daemon CPU | ticks/s | daemon µs per tick | generator µs per tick | p50 / p99 µs |")
print("|---|---|---|---|---|---|---|")
for c in (1000, 100, 16):
    f = load_json(f"{out}/lpc-{c}.json")
    if not f:
        print(f"| {c} | – | – | – | – | – | – |")
        continue
    rate = f["ticks"]["received"] / f["duration"]
    per_tick = f["daemon"]["cpu_pct"] / 100 / rate * 1e6 if rate else None
    print(f"| {c:,} | {1000 / c:.1f} | {f['daemon']['cpu_pct']:.1f} % | {rate:,.0f} | {fmt(per_tick, 2)} | {fmt(generator_us_per_tick(f), 2)} "
          f"| {fmt(f['latency_us']['p50'])} / {fmt(f['latency_us']['p99'])} |")

print()
print("Control plane.")
print()
s = load_json(f"{out}/startup.json")
if s:
    print(f"- exec → first answered Health/Check: p50 {s['startup_ms']['p50']} ms, max {s['startup_ms']['max']} ms "
          f"over {s['runs']} starts (target < 150 ms)")
g = load_json(f"{out}/register.json")
if g:
    print(f"- Register round trip with {g['links']:,} links streaming: p50 {fmt(g['register_us']['p50'])} µs, "
          f"p99 {fmt(g['register_us']['p99'])} µs, max {fmt(g['register_us']['max'])} µs over {g['calls']} calls (target p99 < 1,000 µs)")
i = load_json(f"{out}/idle.json")
if i:
    print(f"- {i['connections']:,} idle connections: daemon RSS {i['rss_kib']:,} KiB ({i['rss_before_kib']:,} KiB before, "
          f"{i['bytes_per_connection']:,.0f} bytes each; target < 65,536 KiB)")
for name, label in (("arbitrate", "varied"), ("arbitrate-velocity", "varied"), ("arbitrate-worst", "worst case")):
    a = load_json(f"{out}/{name}.json")
    if a:
        if a.get("velocity_reports"):
            label += f", {a['velocity_reports']:,} with a content-velocity report, so the panel arbitrates too"
        print(f"- arbitration over {a['links']:,} links ({label}: {a['distinct_votes']:,} distinct range/entitlement pairs): "
              f"Arbiter.decide p50 {fmt(a['decide_us']['p50'])} µs, p99 {fmt(a['decide_us']['p99'])} µs; "
              f"re-arbitration (Compositor.update) p50 {fmt(a['rearbitrate_us']['p50'])} µs, p99 {fmt(a['rearbitrate_us']['p99'])} µs (target < 1,000 µs)")
b = load_json(f"{out}/arbitrate-boost-ends.json")
if b and b.get("boost_end_vsync_us"):
    print(f"- one user's {b['boost_ends']:,} boosts ending before one vsync, beside {b['links']:,} links of the vote they "
          f"rejoin: that vsync p50 {fmt(b['boost_end_vsync_us']['p50'])} µs, p99 {fmt(b['boost_end_vsync_us']['p99'])} µs; "
          f"an ordinary vsync of the same links p50 {fmt(b['ordinary_vsync_us']['p50'])} µs, p99 {fmt(b['ordinary_vsync_us']['p99'])} µs")
t = load_json(f"{out}/tick-cost.json")
if t:
    print(f"- the tick plane alone (`framebench tick-cost`, {t['links']:,} links at 120 Hz stepped in process over socket "
          f"pairs, no load generator; {t['send_path']}): {fmt(t['step_ns_per_tick'])} ns of wall time per delivered tick "
          f"({t['ticks']:,} of {t['expected']:,} delivered)")
c = load_json(f"{out}/tick-cost-callgrind.json")
if os.path.exists(f"{out}/tick-cost-callgrind.skipped"):
    print(f"- instructions per tick: not counted: {open(f'{out}/tick-cost-callgrind.skipped').read().strip()}")
elif c:
    instructions = None
    try:
        instructions = int(open(f"{out}/callgrind.tick-cost").read().split("totals:")[1].split()[0])
    except (OSError, IndexError, ValueError):
        pass
    stepped = c["ticks"] + c.get("warmup_ticks", 0)
    if not instructions:
        print("- instructions per tick: callgrind collected nothing inside `TickEngine.step` (its symbol, found by its "
              "demangled name in run.sh, was never entered?)")
    elif stepped:
        print(f"- the same under callgrind: {instructions / stepped:,.0f} instructions of user space per delivered tick "
              f"(`TickEngine.step` inclusive, {stepped:,} ticks in {instructions:,} instructions; the functions in "
              f"`tick-cost-callgrind.txt`)")
quiet = [l.strip() for l in open(f"{out}/quiet.log")] if os.path.exists(f"{out}/quiet.log") else []
noisy = sum(1 for l in quiet if l.startswith("noisy"))
print()
print(f"quiet-wait: {len(quiet) - noisy} quiet, {noisy} noisy starts (see {out}/quiet.log)")
