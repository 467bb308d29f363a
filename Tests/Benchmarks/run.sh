#!/usr/bin/env bash
# Tests/Benchmarks/run.sh: reproduces the results table of docs/performance.md.
#
# For each N (links, one per connection, 120 Hz) it waits for a quiet machine, then runs
# in turn the C fan-out floor (limit-fanout.sh), the D-Bus peer (peer-dbus.sh, for
# N <= 1000: beyond that dbus-daemon queues for seconds) and `framebench --spawn-daemon`
# (framebench first in even rounds), all with the same N, window and reader-process
# count; it repeats that REPEAT times and
# prints the medians as a markdown table, with the generator's CPU per received tick beside
# the floor's C readers' (the generator must not be what is measured), and the floor once more with its
# server's sockets watched for input (listening_floor.c), to show what a listening server costs its reader. Then links-per-connection rows and the
# control-plane benchmarks, the tick plane alone (framebench tick-cost, natively and under callgrind), and the
# virtual clock's 10-minute scenario (virtual_clock.py) and a mass disconnect (mass_disconnect.py). Raw outputs go to .build/bench/<time>/.
#
# Environment (defaults): NS="100 1000 2000 4000" DURATION=5 REPEAT=3 PROCESSES=2
#   BENCH_DIR=../shared/bench (the measuring instruments) SKIP_BUILD= (1: reuse the release build)
#   BASELINE= (a framerated binary, e.g. a release build of an older commit: measured too, same runs)
#   BASELINE_NS="100 1000" (the Ns the baseline runs at)
#   LOAD_ONLY= (1: only the N rows, without the links-per-connection and control-plane runs)
#   LISTENING_NS="1000 2000" (the Ns at which the floor also runs with its server listening; empty: none)
# Usage: make bench    or    Tests/Benchmarks/run.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
NS=${NS:-"100 1000 2000 4000"}
DURATION=${DURATION:-5}
REPEAT=${REPEAT:-3}
PROCESSES=${PROCESSES:-2}
LISTENING_NS=${LISTENING_NS-"1000 2000"}
BENCH_DIR=${BENCH_DIR:-"$root/../shared/bench"}
out="$root/.build/bench/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"

for tool in limit-fanout.sh peer-dbus.sh quiet-wait.sh; do
  [[ -x $BENCH_DIR/$tool ]] || { echo "missing $BENCH_DIR/$tool (set BENCH_DIR)" >&2; exit 2; }
done
# The same release build as make test-realtime, install and deb (the Makefile's RELEASE).
release=(-c release --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now)
if [[ -z ${SKIP_BUILD:-} ]]; then
  swift build "${release[@]}" --product framerated >&2
  swift build "${release[@]}" --product framebench >&2
fi
bin="$(swift build "${release[@]}" --show-bin-path)"
fb="$bin/framebench"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

echo "# framerated benchmark $(date -u +%FT%TZ) on $(nproc) cores, $(uname -r)" | tee "$out/summary.md" >&2
echo "# raw outputs: $out" >&2

quiet() { "$BENCH_DIR/quiet-wait.sh" 60 15 | tee -a "$out/quiet.log" >&2; }

# One instrument's run at N links, round r.
run_floor() {
  echo "run $r N=$n: floor" >&2
  "$BENCH_DIR/limit-fanout.sh" "$n" "$DURATION" -P "$PROCESSES" >"$out/floor-$n-$r.txt" 2>&1 || true
}
# The floor again, its server's sockets watched for input as a daemon's must be
# (listening_floor.c, preloaded): what listening costs the floor's reader per tick, beside
# the plain floor of the same round. At the Ns of LISTENING_NS (default: §2's 1,000 and 2,000).
# It runs last in each round, so the pair §2 is judged on stays as close together as before.
listening_floor=""
if [[ -n $LISTENING_NS ]]; then
  if ! grep -q 'sfd\[i\] = sv\[0\]' "$BENCH_DIR/fanout_floor.c" 2>/dev/null; then
    echo "the floor no longer keeps sv[0] for its server: listening_floor.c would watch the wrong end; not run" \
      | tee "$out/floor-listening.skipped" >&2
  elif gcc -O2 -Wall -shared -fPIC -o "$out/listening_floor.so" "$root/Tests/Benchmarks/listening_floor.c" -ldl; then
    listening_floor="$out/listening_floor.so"
  else
    echo "listening_floor.c did not compile; not run" | tee "$out/floor-listening.skipped" >&2
  fi
fi
run_listening_floor() {
  [[ -n $listening_floor && " $LISTENING_NS " == *" $n "* ]] || return 0
  echo "run $r N=$n: floor, its server listening" >&2
  LD_PRELOAD="$listening_floor" "$BENCH_DIR/limit-fanout.sh" "$n" "$DURATION" -P "$PROCESSES" \
    >"$out/floor-listening-$n-$r.txt" 2>&1 || true
}
run_dbus() {
  ((n <= 1000)) || return 0
  echo "run $r N=$n: dbus" >&2
  "$BENCH_DIR/peer-dbus.sh" "$n" "$DURATION" dbus-daemon -P "$PROCESSES" >"$out/dbus-$n-$r.txt" 2>&1 || true
}
run_framebench() {
  echo "run $r N=$n: framebench" >&2
  timeout 300 "$fb" load --spawn-daemon --links "$n" --duration "$DURATION" --processes "$PROCESSES" \
    --probe-interval 0.05 --json >"$out/framebench-$n-$r.json" 2>"$out/framebench-$n-$r.err" || true
  if [[ -n ${BASELINE:-} && " ${BASELINE_NS:-100 1000} " == *" $n "* ]]; then
    echo "run $r N=$n: framebench against the baseline $BASELINE" >&2
    timeout 300 "$fb" load --spawn-daemon --framerated "$BASELINE" --links "$n" --duration "$DURATION" \
      --processes "$PROCESSES" --probe-interval 0.05 --json >"$out/baseline-$n-$r.json" 2>"$out/baseline-$n-$r.err" || true
  fi
}

# Odd rounds run the floor first, even rounds framebench first: a machine that drifts
# (the floor's own cost per tick varied by 70 % within one day on a shared VM) then
# favours neither side of a ratio over the rounds.
for ((r = 1; r <= REPEAT; r++)); do
  for n in $NS; do
    quiet
    if ((r % 2 == 1)); then
      run_floor; run_dbus; run_framebench; run_listening_floor
    else
      run_framebench; run_floor; run_dbus; run_listening_floor
    fi
  done
done

# The send path: the same load with one send(2) per connection instead of one io_uring
# submission per vsync (--tick-sends send), one run each at 1,000 and 2,000 links.
for n in $([[ -n ${LOAD_ONLY:-} ]] || echo 1000 2000); do
  quiet
  echo "send path: N=$n with send(2)" >&2
  timeout 300 "$fb" load --spawn-daemon --links "$n" --duration "$DURATION" --processes "$PROCESSES" --probe-interval 0.05 \
    --daemon-arg=--tick-sends --daemon-arg=send --json >"$out/sendcalls-$n.json" 2>"$out/sendcalls-$n.err" || true
done

# Fan-out threads: one thread pinned to one core (taskset -c 1) against two threads on both
# cores (taskset -c 0,1), at 2,000 and 4,000 links; the generator runs unpinned beside them.
for n in $([[ -n ${LOAD_ONLY:-} ]] || echo ${SCALING_NS:-2000 4000}); do
  for k in 1 2; do
    cpus=$([[ $k == 1 ]] && echo 1 || echo 0,1)
    pinned="$out/framerated-taskset-$k"
    printf '#!/bin/sh\nexec taskset -c %s "%s" "$@"\n' "$cpus" "$bin/framerated" >"$pinned"
    chmod +x "$pinned"
    quiet
    echo "scaling: N=$n, $k fan-out thread(s) on CPUs $cpus" >&2
    timeout 300 "$fb" load --spawn-daemon --framerated "$pinned" --links "$n" --duration "$DURATION" --processes "$PROCESSES" \
      --probe-interval 0.05 --daemon-arg=--fanout-threads --daemon-arg="$k" --json >"$out/scaling-$n-$k.json" 2>"$out/scaling-$n-$k.err" || true
  done
done

# Links per connection: 1,000 links on 1,000, 100 and 16 connections.
for c in $([[ -n ${LOAD_ONLY:-} ]] || echo 1000 100 16); do
  quiet
  echo "links per connection: 1000 links on $c connections" >&2
  timeout 300 "$fb" load --spawn-daemon --links 1000 --connections "$c" --duration "$DURATION" --processes "$PROCESSES" \
    --probe-interval 0 --json >"$out/lpc-$c.json" 2>"$out/lpc-$c.err" || true
done

# Control plane.
if [[ -z ${LOAD_ONLY:-} ]]; then
quiet
"$fb" startup --runs 10 --json >"$out/startup.json" 2>&1 || true
quiet
"$fb" register --spawn-daemon --links 1000 --json >"$out/register.json" 2>&1 || true
quiet
"$fb" idle --spawn-daemon --connections 4096 --json >"$out/idle.json" 2>&1 || true
quiet
"$fb" arbitrate --links 10000 --iterations 2000 --json >"$out/arbitrate.json" 2>&1 || true
"$fb" arbitrate --links 10000 --iterations 2000 --velocity-reports 1 --json >"$out/arbitrate-velocity.json" 2>&1 || true
"$fb" arbitrate --links 10000 --iterations 500 --worst-case --json >"$out/arbitrate-worst.json" 2>&1 || true
"$fb" arbitrate --links 10000 --iterations 400 --boost-ends 1024 --json >"$out/arbitrate-boost-ends.json" 2>&1 || true
fi

# The tick plane alone (framebench tick-cost): 1,000 links at 120 Hz stepped in process on
# socket pairs, no load generator beside it. Natively: its wall time per delivered tick.
# Under callgrind, collecting only inside TickEngine.step: the instructions its user space
# executes per delivered tick, a figure that does not move with the machine's load. The
# step's symbol is found by its demangled name, so a change to its signature cannot make
# the filter match nothing (or a closure inside it, which would toggle collection off).
# When the count cannot be taken, why is written to tick-cost-callgrind.skipped, and
# table.py prints it in the table. Valgrind 3.19 cannot read this toolchain's DWARF 5,
# so callgrind runs a copy without the debug sections (symbols stay).
if [[ -z ${LOAD_ONLY:-} ]]; then
quiet
echo "tick cost: 1,000 links stepped in process" >&2
"$fb" tick-cost --links 1000 --vsyncs 600 --json >"$out/tick-cost.json" 2>"$out/tick-cost.err" || true
step_symbol=""
skipped=""
rm -f "$out/tick-cost-callgrind.skipped"
if ! command -v nm >/dev/null || ! command -v swift >/dev/null; then
  skipped="nm or swift (for swift demangle) missing"
else
  step_candidates=$(nm --defined-only "$fb" | awk '{print $3}' | grep 'TickEngineC4step' || true)
  # awk reads to the end (no early exit), so paste never writes to a closed pipe.
  step_symbol=$(paste -d ' ' <(printf '%s\n' "$step_candidates") <(printf '%s\n' "$step_candidates" | swift demangle --simplified) \
    | awk '!found && $2 == "TickEngine.step(at:previousStepFinished:)" { print $1; found = 1 }')
  [[ -n $step_symbol ]] || skipped="no symbol of framebench demangles to TickEngine.step(at:previousStepFinished:)"
fi
if ! command -v valgrind >/dev/null || ! command -v objcopy >/dev/null; then
  skipped=${skipped:-"valgrind or objcopy missing"}
fi
if [[ -n $skipped ]]; then
  echo "tick cost: $skipped; instructions per tick not counted" >&2
  echo "$skipped" >"$out/tick-cost-callgrind.skipped"
else
  objcopy --strip-debug "$fb" "$out/framebench-symbols-only"
  SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.tick-cost" --collect-atstart=no \
    --toggle-collect="$step_symbol" \
    "$out/framebench-symbols-only" tick-cost --links 1000 --vsyncs 60 --warmup 12 --json \
    >"$out/tick-cost-callgrind.json" 2>"$out/tick-cost-callgrind.err" || true
  callgrind_annotate --inclusive=no "$out/callgrind.tick-cost" >"$out/tick-cost-callgrind.txt" 2>/dev/null || true
  rm -f "$out/framebench-symbols-only"
fi
fi

# The virtual clock (issue 14 §3): 10 virtual minutes, a 120 Hz and a 30 Hz link answering
# every tick with FrameDone, against framerated --clock virtual (target: under 10 wall s).
if [[ -z ${LOAD_ONLY:-} ]]; then
quiet
echo "virtual clock: 10 virtual minutes, 120 Hz + 30 Hz links" >&2
timeout 300 python3 "$root/Tests/Benchmarks/virtual_clock.py" "$bin/framerated" --minutes 10 >"$out/virtual-clock.json" 2>"$out/virtual-clock.err" || true
fi

# Closing many connections at once: how long the control loop is busy releasing 4,000
# one-link connections, and whether a 120 Hz link on another connection keeps ticking.
if [[ -z ${LOAD_ONLY:-} ]]; then
quiet
echo "mass disconnect: 4,000 one-link connections closed at once" >&2
timeout 300 python3 "$root/Tests/Benchmarks/mass_disconnect.py" "$bin/framerated" --connections 4000 \
  >"$out/mass-disconnect.json" 2>"$out/mass-disconnect.err" || true
fi

python3 "$root/Tests/Benchmarks/table.py" "$out" "$NS" "$REPEAT" | tee -a "$out/summary.md"
if [[ -s $out/virtual-clock.json ]]; then
  echo "virtual clock, 10 virtual minutes (120 Hz + 30 Hz links): $(cat "$out/virtual-clock.json")" | tee -a "$out/summary.md"
fi
if [[ -s $out/mass-disconnect.json ]]; then
  echo "mass disconnect (4,000 one-link connections closed at once): $(cat "$out/mass-disconnect.json")" | tee -a "$out/summary.md"
fi
