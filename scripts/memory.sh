#!/usr/bin/env bash
# Memory: bin/llmtop against hostile input under a memory limit
# (MEM_LIMIT_MB, a few hundred MB): each case must end by
# itself with a clear error or a result that says what it dropped, never
# with Go's "fatal error: out of memory" (a crash that exits 2, the code for
# "critical", and leaves a terminal raw). `make test-memory` builds the
# binary and runs this; it prints each case's peak RSS.
#
# The limit is the data segment (`ulimit -d`, RLIMIT_DATA: the private
# memory a process writes), not the address space (`ulimit -v`): every Go
# program reserves about 600 MB of address space for the heap's page
# summaries at start-up and dies before main under `ulimit -v` below
# ~800 MB, whatever it would go on to use.
#
# Cases: a hostile Prometheus (scripts/hostile_server.py: 9 090 targets and
# 100 000 series per query; 5 000 targets; answers of 200 MiB each, 6-7 at
# once) read by `snapshot --prometheus`; crafted recordings (a
# tick flood, huge notes) read by diagnose --from, snapshot --from and
# export-openmetrics. Add a case with
#   mem_case NAME WANT_RC_REGEX WANT_TEXT -- llmtop ARGS...
# (WANT_TEXT is a grep -E pattern stdout+stderr must match).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${BIN:-$ROOT/bin/llmtop}
WORK=$(mktemp -d)
FAILS=0
MEM_LIMIT_MB=${MEM_LIMIT_MB:-300}
# RSS_LIMIT_MB: the peak resident memory a case may reach.
RSS_LIMIT_MB=${RSS_LIMIT_MB:-250}
CASE_TIMEOUT=${CASE_TIMEOUT:-90}

command -v python3 >/dev/null || { echo "memory: python3 missing (it serves the hostile endpoints)"; exit 1; }
[ -x "$BIN" ] || { echo "memory: $BIN missing: run make build"; exit 1; }

cleanup() {
	[ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

python3 "$ROOT/scripts/hostile_server.py" >"$WORK/port" 2>"$WORK/server.err" &
SERVER_PID=$!
for _ in $(seq 300); do [ -s "$WORK/port" ] && break; sleep 0.1; done
[ -s "$WORK/port" ] || { echo "memory: the hostile server did not start: $(cat "$WORK/server.err")"; exit 1; }
URL=http://127.0.0.1:$(cat "$WORK/port")
echo "memory: hostile endpoints under $URL; data limited to $MEM_LIMIT_MB MB (ulimit -d), RSS to $RSS_LIMIT_MB MB"

# run_limited OUT CMD...: runs CMD under the limits, its stdout+stderr in
# OUT; prints "RC PEAK_RSS_KB".
run_limited() {
	local out=$1
	shift
	python3 - "$MEM_LIMIT_MB" "$CASE_TIMEOUT" "$out" "$@" <<'PY'
import resource, subprocess, sys
limit, timeout, out, cmd = int(sys.argv[1]) << 20, float(sys.argv[2]), sys.argv[3], sys.argv[4:]
def pre():
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
with open(out, "wb") as f:
    p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, preexec_fn=pre)
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        rc = "timeout"
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}

# mem_case NAME WANT_RC WANT_TEXT -- CMD...: CMD (bin/llmtop's arguments)
# ends with an exit status matching WANT_RC (a regex), prints WANT_TEXT,
# never a Go fatal error, and peaks under RSS_LIMIT_MB.
mem_case() {
	local name=$1 want_rc=$2 want_text=$3 rc kb res
	shift 4
	res=$(run_limited "$WORK/out" "$BIN" "$@")
	rc=${res% *}
	kb=${res#* }
	local bad=""
	grep -qE "fatal error|runtime: out of memory|panic:|goroutine [0-9]+ \[" "$WORK/out" && bad="a Go crash"
	[[ "$rc" =~ ^($want_rc)$ ]] || bad="${bad:+$bad; }exit $rc (want $want_rc)"
	grep -qE -- "$want_text" "$WORK/out" || bad="${bad:+$bad; }no /$want_text/ in its output"
	[ $((kb / 1024)) -le "$RSS_LIMIT_MB" ] || bad="${bad:+$bad; }peak RSS $((kb / 1024)) MB over $RSS_LIMIT_MB MB"
	if [ -z "$bad" ]; then
		echo "ok   $name: exit $rc, peak RSS $((kb / 1024)) MB"
	else
		echo "FAIL $name: $bad (peak RSS $((kb / 1024)) MB)"
		tail -c 1500 "$WORK/out" | sed 's/^/     | /'
		FAILS=$((FAILS + 1))
	fi
}

# --- a hostile Prometheus ---------------------------------------------------
mem_case "snapshot --prometheus, 9 090 targets x 100 000 series a query" '0|1|3' 'narrow --match' \
	-- snapshot --prometheus "$URL/promflood" --json --prometheus-timeout 30s
mem_case "snapshot --prometheus, 5 000 targets (over the cap of 1 000)" '0' 'follows at most 1000 targets' \
	-- snapshot --prometheus "$URL/promfleet" --json --prometheus-timeout 30s
mem_case "snapshot --prometheus, 200 MiB answers, 6-7 queries at once" '1|3' 'over [0-9]+ (MiB|KiB) together this refresh' \
	-- snapshot --prometheus "$URL/prombig" --json --prometheus-timeout 30s

# --- crafted recordings -----------------------------------------------------
# A 4 MB gzip holding a header and 40 million tick lines (1.2 GB unpacked),
# and one holding twenty 60 MiB notes: each face that reads a recording
# ends with an error naming the record and its offset (exit 70, an error that
# is no verdict), never out of memory.
python3 - "$WORK" <<'PY'
import sys, zlib
work = sys.argv[1]
hdr = b'{"llmtop_recording":1,"face":"monitor","started":"2026-11-24T14:00:00Z","endpoints":["http://127.0.0.1:8000"]}\n'
def gz(path, parts):
    with open(path, "wb") as f:
        z = zlib.compressobj(9, zlib.DEFLATED, 31)
        for p in parts:
            f.write(z.compress(p))
        f.write(z.flush())
chunk = b'{"t":1795615200000000000,"k":"tick"}\n' * 100000
gz(work + "/ticks.llmrec", [hdr] + [chunk] * 400)
note = b'{"t":1795615200000000000,"k":"note","m":{"text":"' + b"x" * (60 << 20) + b'"}}\n'
gz(work + "/notes.llmrec", [hdr] + [note] * 20)
PY
for f in ticks notes; do
	for face in "diagnose --from" "snapshot --from" "export-openmetrics"; do
		# shellcheck disable=SC2086 # the face is two words
		mem_case "$face a crafted recording ($f: $(du -k "$WORK/$f.llmrec" | cut -f1) KB)" '70' 'record [0-9]+ at byte [0-9]+' \
			-- $face "$WORK/$f.llmrec"
	done
done

if [ "$FAILS" -gt 0 ]; then
	echo "memory: $FAILS check(s) failed"
	exit 1
fi
echo "memory: all checks passed"
