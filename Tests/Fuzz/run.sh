#!/usr/bin/env bash
# Builds the libFuzzer targets of Tests/Fuzz and runs each for FUZZ_SECONDS seconds.
#
#   Tests/Fuzz/run.sh                 every target, FUZZ_SECONDS (default 60) each
#   Tests/Fuzz/run.sh JSONFraming     one target
#   FUZZ_RUNS=10000000 Tests/Fuzz/run.sh JSONFraming   a number of executions instead of a time
#   FUZZ_MAX_LEN=1024                 longest input libFuzzer generates (default: its own choice)
#   ASAN_OPTIONS=malloc_context_size=0   long runs: no allocation stacks recorded (faster; a
#                                     finding replayed without it reports them)
#   FUZZ_WORKERS=2                    one campaign, N worker processes sharing its corpus
#                                     (libFuzzer's -jobs=N -workers=N: each worker runs FUZZ_RUNS/N,
#                                     rounded up, and picks up the others' finds every second;
#                                     logs in .build/fuzz/logs/<target>/fuzz-K.log; the total is
#                                     printed at the end). Long campaigns: about twice the
#                                     executions per core of FUZZ_FORK, whose short jobs each start
#                                     from a small slice of the corpus and rediscover the rest
#   FUZZ_FORK=2                       libFuzzer's fork mode: one campaign, N worker processes
#                                     sharing its corpus (with FUZZ_RUNS, stops after about that
#                                     many executions in all, checked every few seconds)
#   FUZZ_BUILD=edges                  long campaigns: edge coverage only (no comparison tracing,
#                                     no ASan; about 3x the executions per second), built apart
#                                     in .build/fuzz-edges; replay the corpus on the default
#                                     build afterwards (FUZZ_REPLAY=1) so ASan sees every input
#   FUZZ_REPLAY=1                     run every input of the corpora once and stop (no mutation)
#   FUZZ_MIN_RUNS=1000                a timed run fails unless each target executed at least this
#                                     many inputs (default 1000; 0: no check): a harness that
#                                     hangs, or stops mutating, must not pass as fuzzed
#
# New inputs go to .build/fuzz/corpus/<target> (kept between runs); the committed seeds in
# Tests/Fuzz/corpus/<target> are only read. A crash, leak or invariant violation stops the
# target, leaves the input in .build/fuzz/artifacts/<target>/ and fails the script.
# See docs/security.md, "Fuzzing".
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
SWIFT="${SWIFT:-swift}"
seconds="${FUZZ_SECONDS:-60}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(JSONFraming JSONRPCEnvelope Dispatcher)

# SwiftPM links with gold by default, which crashes on ASan-instrumented objects; lld works.
build=("$SWIFT" build -c release --package-path "$here" -Xswiftc -use-ld=lld)
case "${FUZZ_BUILD:-full}" in
  full) build+=(-Xswiftc -sanitize=fuzzer,address) ;;
  edges) build+=(--scratch-path "$root/.build/fuzz-edges" -Xswiftc -sanitize=fuzzer
                 -Xswiftc -sanitize-coverage=edge,pc-table,inline-8bit-counters) ;;
  *) echo "FUZZ_BUILD must be full or edges" >&2; exit 2 ;;
esac
"${build[@]}"
bin="$("${build[@]}" --show-bin-path)"

# A timed run (no FUZZ_RUNS, no replay) that executed fewer than FUZZ_MIN_RUNS inputs fails.
check_executions() {
  local target=$1 count=${2:-0} minimum=${FUZZ_MIN_RUNS:-1000}
  [ -z "${FUZZ_REPLAY:-}" ] && [ -z "${FUZZ_RUNS:-}" ] || return 0
  if [ "$count" -lt "$minimum" ]; then
    echo "fuzz $target: only ${count} executions in ${seconds} s, fewer than FUZZ_MIN_RUNS=$minimum: the harness is stuck or not running" >&2
    exit 1
  fi
  echo "fuzz $target: $count executions (at least $minimum required)"
}

for target in "${targets[@]}"; do
  work="$root/.build/fuzz/corpus/$target"
  artifacts="$root/.build/fuzz/artifacts/$target"
  mkdir -p "$work" "$artifacts"
  if [ -n "${FUZZ_REPLAY:-}" ]; then limit=(-runs=0); what="replay of the corpora"
  elif [ -n "${FUZZ_RUNS:-}" ]; then limit=(-runs="$FUZZ_RUNS"); what="$FUZZ_RUNS runs"
  else limit=(-max_total_time="$seconds"); what="$seconds s"; fi
  [ -n "${FUZZ_MAX_LEN:-}" ] && limit+=(-max_len="$FUZZ_MAX_LEN")
  [ -n "${FUZZ_FORK:-}" ] && limit+=(-fork="$FUZZ_FORK")
  run=("$bin/$target" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
       -artifact_prefix="$artifacts/" "$work" "$here/corpus/$target")
  workers="${FUZZ_WORKERS:-}"
  if [ -z "$workers" ]; then
    echo "fuzz $target: $what"
    log="$root/.build/fuzz/logs/$target.log"
    mkdir -p "$(dirname "$log")"
    status=0
    "${run[0]}" "${limit[@]}" "${run[@]:1}" 2>&1 | tee "$log" || status=$?
    [ "$status" -eq 0 ] || exit "$status"
    # The final stats line; fork mode prints none, only its progress lines (#N ...).
    count=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    [ -n "$count" ] || count=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$log" | tail -1)
    check_executions "$target" "$count"
    continue
  fi
  case "$workers" in ''|*[!0-9]*|0) echo "FUZZ_WORKERS must be a positive number" >&2; exit 2 ;; esac
  if [ -n "${FUZZ_RUNS:-}" ] && [ -z "${FUZZ_REPLAY:-}" ]; then
    # Each worker's share, rounded up so that the campaign runs at least FUZZ_RUNS.
    share=$(( (FUZZ_RUNS + workers - 1) / workers ))
    limit=("${limit[@]/#-runs=*/-runs=$share}"); what="$what ($workers workers x $share)"
  fi
  logs="$root/.build/fuzz/logs/$target"
  rm -rf "$logs"; mkdir -p "$logs"
  echo "fuzz $target: $what, $workers workers, logs in $logs"
  status=0
  (cd "$logs" && "${run[0]}" "${limit[@]}" -jobs="$workers" -workers="$workers" "${run[@]:1}") || status=$?
  total=0
  for log in "$logs"/fuzz-*.log; do
    units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    echo "  $(basename "$log"): ${units:-no final count} executions; $(grep -cE '^#[0-9]+.*NEW' "$log") new inputs"
    total=$(( total + ${units:-0} ))
  done
  echo "fuzz $target: $total executions in all"
  if [ "$status" -ne 0 ]; then
    grep -hE 'ERROR: libFuzzer|invariant violated|SUMMARY|Test unit written' "$logs"/fuzz-*.log >&2 || true
    exit "$status"
  fi
  check_executions "$target" "$total"
done
