#!/usr/bin/env bash
# The loop in a real terminal: `llmtop run` launches the simulator with a
# concurrency cap too small for its load; the queueing finding opens; a
# benchmark gives the run its load profile; A applies the finding's change
# after showing the diff and a confirmation; the engine restarts with the
# new flag; the same benchmark runs on the new run; the runs view shows
# before → after at that load. Then q asks and stops the engine, and a
# closed terminal leaves the engine running with a note where its log is.
#
# The sim's background traffic is fixed at 10 requests/s (--rate): more than
# 16 sequences serve, less than 32 do, so the one change the finding
# suggests is the fix. Own tmux server (-L); run by `make e2e`.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${BIN:-$ROOT/bin/llmtop}
SOCK=llmtop-e2e-run-$$
WORK=$(mktemp -d)
FAILS=0

command -v tmux >/dev/null || { echo "e2e-run: tmux missing: run make deps"; exit 1; }
[ -x "$BIN" ] || { echo "e2e-run: $BIN missing: run make build"; exit 1; }

ENGINE_PID=
cleanup() {
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	# the engine llmtop left running, found by the note it wrote
	for note in "$WORK"/state/llmtop/run/*.pid; do
		[ -f "$note" ] || continue
		pid=$(sed -n 's/^pid: //p' "$note")
		[ -n "$pid" ] && kill -TERM -- "-$pid" 2>/dev/null || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

# shellcheck source=scripts/tmux-lib.sh
. "$ROOT/scripts/tmux-lib.sh"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
export XDG_STATE_HOME=$WORK/state
note_pid() { sed -n 's/^pid: //p' "$WORK"/state/llmtop/run/*.pid 2>/dev/null | tail -1; }
alive() { kill -0 "$1" 2>/dev/null; }

PORT=$(free_port)
SIM="$BIN sim --scenario queue-buildup --max-num-seqs 16 --rate 10 --port $PORT --startup-time 2s"
start 200 55 run --no-gpu --stop-timeout 10s -- "$SIM"

check "run: the queueing finding opens" "requests wait in the queue" 90

# A benchmark on this run: its settings are the load profile both runs get
# (custom: 4 streams, 10 s).
keys b Right Right Down Left Left Down Left Enter
check "run: the benchmark runs on the first run" "saved:" 60
keys Escape
sleep 0.5

keys A
check "apply: the finding and its change are listed" "→  --max-num-seqs 32" 5
keys Enter
check "apply: the exact diff is shown" "--max-num-seqs 16 → 32" 5
check "apply: the confirmation names the drain and SIGKILL" "waits up to 10s for it to drain, then sends SIGKILL" 5
# E2E_SHOW=DIR keeps the screens the docs quote (docs/loop.md).
[ -n "${E2E_SHOW:-}" ] && screen >"$E2E_SHOW/apply.txt"
keys y
check "apply: the engine is stopped gracefully" "stopped on SIGTERM" 30
check "apply: the new command line runs" "started pid" 10
check "apply: the same benchmark runs once the new run serves" "the new run serves: the same benchmark, 4 streams × 10s" 90
check "apply: the verdict, before → after at the same load" "at 4 streams × 10s, 256 in / 128 out: better" 60
screen | grep -F -- "--max-num-seqs 16 → 32: TTFT p99" | sed 's/^[ ┃]*/     verdict: /; s/[ ┃]*$//' || true
[ -n "${E2E_SHOW:-}" ] && screen >"$E2E_SHOW/verdict.txt"

keys Escape
sleep 0.3
keys r
check "runs: the new run is marked with the applied change" "applied: ttft_queueing → --max-num-seqs 16 → 32" 5
check "runs: the comparison is at the same offered load" "the two runs' benchmarks at the same offered load" 5
[ -n "${E2E_SHOW:-}" ] && screen >"$E2E_SHOW/runs.txt"
keys Escape
sleep 0.3

# q asks; s stops the engine.
PID=$(note_pid)
keys q
check "quit: asks whether to stop the engine" "[s]top it or [l]eave it running?" 10
keys s Enter
check "quit: the engine is stopped" "the engine stopped on SIGTERM" 15
if [ -n "$PID" ] && alive "$PID"; then
	echo "FAIL quit: the engine (pid $PID) still runs after s"
	FAILS=$((FAILS + 1))
else
	echo "ok   quit: the engine's process is gone"
fi

# A restart llmtop performs is no outage: an engine that takes 4 s to listen
# after each start (as one loading weights does; a fresh `llmtop sim`
# listens at once) reads "restarting (applied …)" while it restarts, never
# DOWN, and its refused scrapes are no "scrape failed" outage events.
rm -f "$WORK"/state/llmtop/run/*.pid
printf '#!/bin/sh\nsleep 4\nexec %s sim "$@"\n' "$BIN" >"$WORK/slow-engine"
chmod +x "$WORK/slow-engine"
PORT=$(free_port)
start 200 55 run --no-gpu --stop-timeout 10s --url "http://127.0.0.1:$PORT" -- "$WORK/slow-engine --scenario queue-buildup --max-num-seqs 16 --rate 10 --port $PORT"
check "slow restart: the queueing finding opens" "CRIT  TTFT over SLO: requests wait in the queue" 120
keys b Right Right Down Left Left Down Left Enter
check "slow restart: the benchmark runs on the first run" "saved:" 60
keys Escape
sleep 0.5
keys A
check "slow restart: the change is listed" "→  --max-num-seqs 32" 5
keys Enter
check "slow restart: the diff is shown" "--max-num-seqs 16 → 32" 5
keys y
# watched from the keypress on, 20 s: the drain, the new start, serving again
down_seen= restarting_seen=
for _ in $(seq 100); do
	top=$(screen | head -2)
	grep -qF "restarting (applied: ttft_queueing → --max-num-seqs 16 → 32)" <<<"$top" && restarting_seen=1
	if [ -z "$down_seen" ] && grep -qE "llmtop +DOWN|nothing listens there" <<<"$top"; then
		down_seen=1
		sed 's/^/     | /' <<<"$top"
	fi
	sleep 0.2
done
if [ -n "$restarting_seen" ]; then
	echo "ok   slow restart: the header says restarting, with the change"
else
	echo "FAIL slow restart: the header never said \"restarting (applied: …)\""
	FAILS=$((FAILS + 1))
fi
if [ -n "$down_seen" ]; then
	echo "FAIL slow restart: read as DOWN while llmtop restarted the engine"
	FAILS=$((FAILS + 1))
else
	echo "ok   slow restart: never DOWN while llmtop restarted the engine"
fi
check "slow restart: the new run serves" "the new run serves" 60
keys Escape 5
check "slow restart: its refused scrapes are the start, not an outage" "not answering yet (engine starting)" 5
check_absent "slow restart: no outage event" "✗ scrape failed"
keys Escape q
check "slow restart: quit asks" "[s]top it or [l]eave it running?" 10
keys s Enter
check "slow restart: the engine is stopped" "the engine stopped on SIGTERM" 15

# A closed terminal leaves the engine running, and says where its log is.
rm -f "$WORK"/state/llmtop/run/*.pid
PORT=$(free_port)
start 160 48 run --no-gpu -- "$BIN sim --port $PORT --startup-time 1s"
check "lost terminal: the engine serves" "UP" 30
PID=$(note_pid)
tmux -L "$SOCK" kill-server
sleep 2
if [ -n "$PID" ] && alive "$PID"; then
	echo "ok   lost terminal: the engine (pid $PID) still runs"
else
	echo "FAIL lost terminal: the engine (pid ${PID:-unknown}) is gone"
	FAILS=$((FAILS + 1))
fi
if grep -q "^log: .*\.log$" "$WORK"/state/llmtop/run/*.pid 2>/dev/null; then
	echo "ok   lost terminal: the note beside the log names the pid, command and log"
else
	echo "FAIL lost terminal: no note beside the log"
	FAILS=$((FAILS + 1))
fi
if curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1 || python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$PORT/v1/models')" 2>/dev/null; then
	echo "ok   lost terminal: the engine still answers"
else
	echo "FAIL lost terminal: the engine does not answer"
	FAILS=$((FAILS + 1))
fi
[ -n "$PID" ] && kill -TERM -- "-$PID" 2>/dev/null || true

if [ "$FAILS" -gt 0 ]; then
	echo "e2e-run: $FAILS check(s) failed"
	exit 1
fi
echo "e2e-run: all checks passed"
