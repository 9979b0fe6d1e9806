#!/usr/bin/env bash
# The monitor in a real terminal: tmux runs bin/llmtop against a fixture
# vLLM server (and against `llmtop demo` when the build has it), types keys
# and reads the screen with capture-pane. `make e2e` builds the binary and
# runs this; tmux comes from `make deps`.
#
# Uses its own tmux server (-L), so it never touches the user's sessions.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${BIN:-$ROOT/bin/llmtop}
SOCK=llmtop-e2e-$$
WORK=$(mktemp -d)
FAILS=0

command -v tmux >/dev/null || { echo "e2e: tmux missing: run make deps"; exit 1; }
command -v python3 >/dev/null || { echo "e2e: python3 missing (it serves the fixture)"; exit 1; }
[ -x "$BIN" ] || { echo "e2e: $BIN missing: run make build"; exit 1; }

cleanup() {
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	[ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

# --- a vLLM-shaped fixture server on a free loopback port ----------------
# A copy of shared/fixtures/metrics/vllm.txt (vLLM V1's exposition).
METRICS=${METRICS:-$ROOT/tui/testdata/vllm_metrics.txt}
cat >"$WORK/server.py" <<'PY'
import http.server, json, socket, sys
metrics = open(sys.argv[1], "rb").read()
routes = {
    "/health": (b"", "text/plain"),
    "/version": (json.dumps({"version": "0.11.0"}).encode(), "application/json"),
    "/v1/models": (json.dumps({"object": "list", "data": [{"id": "meta-llama/Llama-3.1-8B-Instruct",
        "object": "model", "owned_by": "vllm", "max_model_len": 131072}]}).encode(), "application/json"),
    "/metrics": (metrics, "text/plain; version=0.0.4"),
}
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body, ctype = routes.get(self.path.split("?")[0], (None, None))
        if body is None:
            self.send_response(404); self.end_headers(); return
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
PY
python3 "$WORK/server.py" "$METRICS" >"$WORK/port" 2>"$WORK/server.err" &
SERVER_PID=$!
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT=$(cat "$WORK/port")
URL=http://127.0.0.1:$PORT
echo "e2e: fixture vLLM at $URL"

# --- helpers (screen, keys, wait_for, check, check_absent, start, resize) ---
# shellcheck source=scripts/tmux-lib.sh
. "$ROOT/scripts/tmux-lib.sh"

# --- the monitor against the fixture -------------------------------------
t0=$(date +%s%N)
start 200 60 --no-gpu "$URL"
if wait_for "llmtop" 5; then
	t1=$(date +%s%N)
	echo "ok   first frame after $(((t1 - t0) / 1000000)) ms (tmux start + poll every 100 ms included)"
else
	echo "FAIL no frame within 5 s"
	FAILS=$((FAILS + 1))
fi
check "health badge" " UP " 10
check "engine and version" "vllm 0.11.0"
check "model" "meta-llama/Llama-3.1-8B-Instruct"
check "max context" "ctx 131072"
check "three columns at 200x60" "6 Diagnosis"
check "running from the fixture" "  37"
check "KV usage from the fixture" "81%"
check "GPU pane present" "4 GPU"
check "--no-gpu said on the GPU pane" "GPU reading off (--no-gpu)"

if tmux -L "$SOCK" capture-pane -p -e -t e2e | grep -q $'\e\[[0-9;]*38;'; then
	echo "FAIL NO_COLOR: colour codes on screen"
	FAILS=$((FAILS + 1))
else
	echo "ok   NO_COLOR draws without colour"
fi

keys '?'
check "help screen" "shift+tab previous pane"
check "help lists pane keys" "scroll events"
keys Escape
check_absent "esc closes help" "shift+tab previous pane"

keys 4
check "zoom GPU pane" "4 GPU"
keys Escape
keys e
check "explain screen" "Sources for vllm"
check "explain names the metric" "vllm:time_to_first_token_seconds"
keys Escape
keys l
check "log view" "following"
keys Escape
keys ']'
check "window 5m" "window 5m"
keys '+'
check "interval 2s" "every 2s"
keys p
check "pause" "PAUSED"
keys p
check_absent "resume" "PAUSED"
keys s
check "snapshot saved" "snapshot saved to"
if ls "$WORK"/llmtop-snapshot-*.json >/dev/null 2>&1 && grep -q '"kv_cache_usage_ratio": 0.8123' "$WORK"/llmtop-snapshot-*.json; then
	echo "ok   snapshot file holds the screen's KV value"
else
	echo "FAIL snapshot file missing or without kv 0.8123"
	FAILS=$((FAILS + 1))
fi

resize 120 40
check "two columns at 120x40" "4 GPU"
resize 80 24
check "tabs at 80x24" "1 Latency 2 Through"
keys Tab
check "tab moves to the next pane (from 4 GPU)" "5 Events ──"
resize 50 12
check "too small" "terminal too small"
resize 200 60
check "back to three columns" "6 Diagnosis"

# The endpoint goes away: the old numbers are marked stale, the badge says
# DOWN and the uptime stops (interval is 2 s here: stale after 6 s).
kill "$SERVER_PID" 2>/dev/null || true
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=
check "DOWN once the server is gone" " DOWN " 10
check "uptime stops while DOWN" "up --, down"
check "stale values marked with their age" "ago) · endpoint down (connection refused)" 10
keys q
check "q quits" "llmtop-exited-0"

# --- a wrong config file is named with its line ---------------------------
printf 'theme = "dark"\n[thresholds]\nttft_p99_ms = fast\n' >"$WORK/bad.toml"
if out=$("$BIN" --config "$WORK/bad.toml" "$URL" 2>&1 </dev/null); then
	echo "FAIL bad config accepted"
	FAILS=$((FAILS + 1))
elif grep -qF "bad.toml:3: ttft_p99_ms" <<<"$out"; then
	echo "ok   bad config names file and line"
else
	echo "FAIL bad config message: $out"
	FAILS=$((FAILS + 1))
fi

# --- --log FILE on a file that is rotated under it ------------------------
# logrotate's default (rename, then a new file): the line written to the new
# file after the rename must reach the screen as a highlighted event. (The
# fixture server is gone by now: the log is followed all the same.)
LOG=$WORK/engine.log
echo "INFO 11-23 12:00:00 [api_server.py:1] vLLM API server version 0.11.0" >"$LOG"
start 200 50 --no-gpu --log "$LOG" "$URL"
keys l
check "rotation: the first file is followed" "vLLM API server version 0.11.0" 10
keys Escape
mv "$LOG" "$LOG.1"
echo "INFO 11-23 12:00:05 [logger.py:1] written to the old file after the rename" >>"$LOG.1"
sleep 0.5
echo "ERROR 11-23 12:00:09 [core.py:1] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free." >"$LOG"
check "rotation: the new file's CUDA OOM is an event" "GPU out of memory: tried to allocate 2.00 GiB" 10
keys l
check "rotation: the log view has the line from the new file" "torch.OutOfMemoryError: CUDA out of memory" 5
keys q

# --- --log FILE written before llmtop started: history, not now -----------
# The real llama-server's log of two runs (sources/logs/testdata/backlog),
# attached while a llama.cpp-shaped endpoint serves: its banners are dated
# "before llmtop started" and make no run (they made RESTARTED, "run 1
# lasted 0ms" and 19 000 req/s).
python3 "$WORK/server.py" "$ROOT/testdata/engines/llamacpp-metrics.txt" >"$WORK/lport" 2>"$WORK/lserver.err" &
LSERVER_PID=$!
for _ in $(seq 50); do [ -s "$WORK/lport" ] && break; sleep 0.1; done
cp "$ROOT/sources/logs/testdata/backlog/llama-server-two-runs.log" "$WORK/llama.log"
start 200 50 --no-gpu --engine llamacpp --log "$WORK/llama.log" "http://127.0.0.1:$(cat "$WORK/lport")"
check "backlog: its events are dated before llmtop started" "before llmtop started · llama-server listening on" 10
check_absent "backlog: no restart made up" "RESTARTED"
keys r
check "backlog: one run, begun when first seen, its banner before llmtop" "(first seen; log start banner before llmtop started)" 5
keys Escape l
check "backlog: the log view shows it as history" "the first 121 before llmtop started" 5
keys q
kill "$LSERVER_PID" 2>/dev/null || true

# --- /metrics broken, the log still talks: values "from log" -------------
if "$BIN" sim --help 2>/dev/null | grep -q "metrics-broken"; then
	"$BIN" sim --scenario metrics-broken --port 0 --log-file "$WORK/mb.log" >"$WORK/mb.out" 2>&1 &
	MB_PID=$!
	for _ in $(seq 50); do grep -q "127.0.0.1:[0-9]" "$WORK/mb.out" 2>/dev/null && break; sleep 0.1; done
	MB_URL=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/mb.out" | head -1)
	if [ -n "$MB_URL" ]; then
		start 200 50 --no-gpu --log "$WORK/mb.log" "$MB_URL"
		check "metrics-broken: badge DEGRADED" " DEGRADED " 10
		check "metrics-broken: log stats stand in" "from log · stats line" 20
		check "metrics-broken: latency says why, not 'not exposed'" "-- /metrics unreadable (" 5
		keys q
	else
		echo "FAIL metrics-broken: the sim printed no address: $(head -3 "$WORK/mb.out")"
		FAILS=$((FAILS + 1))
	fi
	kill "$MB_PID" 2>/dev/null || true
fi

# --- the demo, when this build has it ------------------------------------
if "$BIN" demo --help 2>/dev/null | grep -q "llmtop demo"; then
	start 160 48 demo
	check "demo: SIMULATED badge" "SIMULATED" 15
	check "demo: engine numbers" "tok/s" 15
	check "demo: the simulator's log lines are events" "vLLM KV cache holds" 15
	check "demo: the diagnosis panel judged" "checks" 15
	check "demo: simulated GPU row" "H100" 10
	keys q
	check "demo: q quits" "llmtop-exited-0"
	# A short recording of a demo, replayed: the replay draws through the
	# same line writer; its own keys pause, seek and quit.
	start 160 48 demo --scenario kv-pressure --record "$WORK/demo.jsonl.gz"
	check "record: the demo runs" "tok/s" 15
	sleep 8
	keys q
	check "record: q quits and keeps the recording" "llmtop-exited-0"
	start 160 48 replay "$WORK/demo.jsonl.gz"
	check "replay: REPLAY badge" "REPLAY" 10
	check "replay: its keys are named" "next finding" 10
	keys Space
	check "replay: space pauses" "PAUSED" 5
	keys .
	check "replay: a minute forward ends it" "END" 10
	keys q
	check "replay: q quits" "llmtop-exited-0"
	# One whole cycle: the right finding per scenario, restarts as runs.
	if ! BIN="$BIN" "$ROOT/scripts/e2e-cycle.sh"; then
		FAILS=$((FAILS + 1))
	fi
else
	echo "skip demo (not in this build)"
fi

# --- the terminal goes away: no llmtop is left behind ---------------------
# kill-pane and kill-session close the pane's terminal. Run as the pane's
# command, llmtop leads the terminal's session and gets SIGHUP; under `make
# run`, make leads it and gets the hangup instead (and then waits for its
# child): llmtop has to notice by itself that its terminal is gone. The
# processes are found by a tag in their environment, so llmtops that others
# run on this machine do not count.
tagged() { # tagged TAG: "PID command line" of every live process carrying TAG
	local e pid
	for e in $(grep -lzxF "LLMTOP_E2E_TAG=$1" /proc/[0-9]*/environ 2>/dev/null); do
		pid=${e#/proc/}
		pid=${pid%/environ}
		echo "$pid $({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null)"
	done
}
wait_for_in() { # wait_for_in SESSION TEXT SECONDS: poll that session's screen
	local deadline=$((SECONDS + $3))
	while [ $SECONDS -lt $deadline ]; do
		tmux -L "$SOCK" capture-pane -p -t "$1" 2>/dev/null | grep -qF -- "$2" && return 0
		sleep 0.2
	done
	return 1
}
hangup() { # hangup NAME TAG TMUX-KILL-COMMAND...: kill the pane, wait ≤ 5 s for TAG's processes to go
	local name=$1 tag=$2 left t0 ms
	shift 2
	if [ -z "$(tagged "$tag" | grep llmtop)" ]; then
		echo "FAIL $name: no llmtop process found before the kill"
		FAILS=$((FAILS + 1))
		return
	fi
	t0=$(date +%s%N)
	tmux -L "$SOCK" "$@"
	while left=$(tagged "$tag") && [ -n "$left" ] && [ $(($(date +%s%N) - t0)) -lt 5000000000 ]; do
		sleep 0.1
	done
	ms=$((($(date +%s%N) - t0) / 1000000))
	if [ -n "$left" ]; then
		echo "FAIL $name: still running ${ms} ms after the pane closed:"
		echo "$left" | sed 's/^/     | /'
		FAILS=$((FAILS + 1))
		# leave nothing behind: these are this test's processes
		echo "$left" | while read -r pid _; do kill -9 "$pid" 2>/dev/null || true; done
	else
		echo "ok   $name: nothing left ${ms} ms after the pane closed"
	fi
}
if "$BIN" demo --help 2>/dev/null | grep -q "llmtop demo"; then
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	sleep 0.3
	HUP_ENV="TERM=xterm-256color NO_COLOR=1 XDG_CONFIG_HOME=$WORK/cfg XDG_STATE_HOME=$WORK/state"
	tmux -L "$SOCK" -f /dev/null new-session -d -s hup-make -x 160 -y 48 -c "$ROOT" \
		"env $HUP_ENV LLMTOP_E2E_TAG=make-$$ make run"
	tmux -L "$SOCK" new-session -d -s hup-plain -x 160 -y 48 -c "$WORK" \
		"env $HUP_ENV LLMTOP_E2E_TAG=plain-$$ $BIN demo"
	tmux -L "$SOCK" set-option -g window-size manual >/dev/null 2>&1 || true
	# make run builds first (a warm build takes seconds, a busy machine more)
	if wait_for_in hup-make SIMULATED 120 && wait_for_in hup-plain SIMULATED 30; then
		hangup "make run, tmux kill-pane" "make-$$" kill-pane -t hup-make
		hangup "llmtop demo, tmux kill-session" "plain-$$" kill-session -t hup-plain
	else
		echo "FAIL hangup: the demos did not start:"
		tmux -L "$SOCK" capture-pane -p -t hup-make 2>/dev/null | tail -5 | sed 's/^/     | /'
		FAILS=$((FAILS + 1))
	fi
	tmux -L "$SOCK" kill-server 2>/dev/null || true
fi

if [ "$FAILS" -gt 0 ]; then
	echo "e2e: $FAILS check(s) failed"
	exit 1
fi
echo "e2e: all checks passed"
