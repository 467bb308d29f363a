#!/usr/bin/env bash
# framectl trace against a real daemon, decoded with Perfetto's published protos, and
# framectl top under a pseudo-terminal and on a pipe.
# Usage: Tests/Trace/run.sh BIN_DIR   (where framerated and framectl are built)
# A venv in .build/trace-venv holds the PyPI packages perfetto (which ships
# perfetto/protos/perfetto/trace/perfetto_trace_pb2.py) and protobuf.
set -euo pipefail
bin="$1"
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/../../.build/trace-venv"
if ! "$venv/bin/python" -c 'import perfetto.protos.perfetto.trace.perfetto_trace_pb2' 2>/dev/null; then
  python3 -m venv "$venv" 2>/dev/null || {
    echo "installing python3-venv"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv
    python3 -m venv "$venv"
  }
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --quiet perfetto protobuf
fi
work="$(mktemp -d)"
socket="$work/framerated.sock"
"$bin/framerated" --socket "$socket" --log-level warning &
daemon=$!
trap 'kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null; rm -rf "$work"' EXIT
# Ready when the socket answers a health check (no fixed sleep).
for _ in $(seq 1 200); do
  "$bin/framectl" health --socket "$socket" >/dev/null 2>&1 && break
  sleep 0.05
done
"$venv/bin/python" "$here/check_trace.py" "$bin/framectl" "$socket" "$work"
"$venv/bin/python" "$here/check_top.py" "$bin/framectl" "$socket"
