#!/usr/bin/env bash
# Faults: tmux runs bin/llmtop against hostile local endpoints (a server
# that never answers, a 100 MB scrape, a gzip bomb, a body that stalls
# after its headers, a redirect loop; scripts/hostile_server.py) and checks
# that the fault is named right, that the screen still answers a key
# within a second, and that memory stays bounded. `make test-faults` builds
# the binary and runs this; tmux comes from `make deps`.
#
# Uses its own tmux server (-L), so it never touches the user's sessions.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${BIN:-$ROOT/bin/llmtop}
SOCK=llmtop-faults-$$
WORK=$(mktemp -d)
FAILS=0
# RSS_LIMIT_MB bounds the monitor's resident memory against any of them:
# reads are capped at 16 MiB a scrape, and the monitor alone is ~30 MB.
RSS_LIMIT_MB=${RSS_LIMIT_MB:-256}

command -v tmux >/dev/null || { echo "faults: tmux missing: run make deps"; exit 1; }
command -v python3 >/dev/null || { echo "faults: python3 missing (it serves the hostile endpoints)"; exit 1; }
[ -x "$BIN" ] || { echo "faults: $BIN missing: run make build"; exit 1; }

cleanup() {
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	[ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

python3 "$ROOT/scripts/hostile_server.py" >"$WORK/port" 2>"$WORK/server.err" &
SERVER_PID=$!
for _ in $(seq 300); do [ -s "$WORK/port" ] && break; sleep 0.1; done # it builds the bomb first
[ -s "$WORK/port" ] || { echo "faults: the hostile server did not start: $(cat "$WORK/server.err")"; exit 1; }
URL=http://127.0.0.1:$(cat "$WORK/port")
echo "faults: hostile endpoints under $URL"

# shellcheck source=scripts/tmux-lib.sh
. "$ROOT/scripts/tmux-lib.sh"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# llmtop_pid: the monitor running in the session's pane (the pane's shell
# has it as its only child until it exits).
llmtop_pid() {
	local pane pid
	pane=$(tmux -L "$SOCK" display -p -t e2e '#{pane_pid}' 2>/dev/null) || return 0
	for pid in $(pgrep -P "$pane"); do
		[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$(readlink -f "$BIN")" ] && echo "$pid" && return 0
	done
	return 0
}

# responsive NAME: `?` draws the help within 1 s. The best of three
# presses counts, so that one hiccup of a busy machine does not fail it;
# a screen blocked by the fault misses all three.
responsive() {
	local try t0 ms best=99999
	for try in 1 2 3; do
		t0=$(now_ms)
		tmux -L "$SOCK" send-keys -t e2e '?'
		while ! screen | grep -qF "shift+tab previous pane" && [ $(($(now_ms) - t0)) -lt 5000 ]; do
			sleep 0.02
		done
		ms=$(($(now_ms) - t0))
		[ "$ms" -lt "$best" ] && best=$ms
		tmux -L "$SOCK" send-keys -t e2e Escape
		wait_for_gone "shift+tab previous pane" 5 || true
		[ "$best" -le 1000 ] && break
		sleep 0.5
	done
	if [ "$best" -le 1000 ]; then
		echo "ok   $1: a key shows in ${best} ms"
	else
		echo "FAIL $1: a key took ${best} ms to show (best of 3)"
		FAILS=$((FAILS + 1))
	fi
}
wait_for_gone() { # wait_for_gone TEXT SECONDS
	local deadline=$((SECONDS + $2))
	while [ $SECONDS -lt $deadline ]; do
		screen | grep -qF -- "$1" || return 0
		sleep 0.05
	done
	return 1
}

# bounded NAME: the monitor's resident memory is under RSS_LIMIT_MB.
bounded() {
	local pid kb
	pid=$(llmtop_pid)
	if [ -z "$pid" ] || ! kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null); then
		echo "FAIL $1: no llmtop process to measure"
		FAILS=$((FAILS + 1))
		return
	fi
	if [ $((kb / 1024)) -le "$RSS_LIMIT_MB" ]; then
		echo "ok   $1: RSS $((kb / 1024)) MB (limit $RSS_LIMIT_MB)"
	else
		echo "FAIL $1: RSS $((kb / 1024)) MB over $RSS_LIMIT_MB MB"
		FAILS=$((FAILS + 1))
	fi
}

# fault NAME PATH TEXT WRONG: llmtop on $URL/PATH names the fault with TEXT
# (and never with WRONG), stays responsive and bounded while the fault
# repeats, and quits on q.
fault() {
	local name=$1 path=$2 text=$3 wrong=$4
	start 160 48 --no-gpu --engine vllm --timeout 2s "$URL/$path"
	# A stalling server costs the timeout for each identity route before
	# the first scrape: allow for several.
	check "$name: named" "$text" 30
	sleep 3 # a few more scrapes of the fault
	check_absent "$name: not named as another fault" "$wrong"
	responsive "$name"
	bounded "$name"
	keys q
	check "$name: q quits" "llmtop-exited-0" 10
}

fault "hung endpoint" hung "no answer within 2s" "unreachable"
fault "100 MB scrape" big "body over 16 MiB, stopped reading" "no answer"
fault "gzip bomb" gzip "body over 16 MiB, stopped reading" "no answer"
fault "body stalls after its headers" stall "then the body stalled" "no answer within"
fault "redirect loop" loop "redirects in a loop" "DNS"

if [ "$FAILS" -gt 0 ]; then
	echo "faults: $FAILS check(s) failed"
	exit 1
fi
echo "faults: all checks passed"
