#!/usr/bin/env bash
# The whole monitor's cost on the box it watches: runs `llmtop sim` and the
# monitor on it (1 s refresh, --no-gpu, the sim's log attached) in a tmux
# window of W×H, and reads the monitor's CPU time (utime+stime from
# /proc/PID/stat) and resident memory over SECONDS.
#
#   scripts/monitor-cost.sh [SECONDS]      (default 60; W=200 H=60)
#   make monitor-cost
#
# Not part of CI: it is a measurement, and the machine's other load shows in it.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/bin/llmtop}
SECS=${1:-60}
W=${W:-200} H=${H:-60}
SOCK=llmtop-cost-$$
WORK=$(mktemp -d)
cleanup() {
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	[ -n "${SIM:-}" ] && kill "$SIM" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

"$BIN" sim --scenario healthy --port 0 --log-file "$WORK/sim.log" >"$WORK/sim.out" 2>&1 &
SIM=$!
for _ in $(seq 50); do grep -q "127.0.0.1:[0-9]" "$WORK/sim.out" 2>/dev/null && break; sleep 0.1; done
URL=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/sim.out" | head -1)
[ -n "$URL" ] || { echo "monitor-cost: the sim printed no address"; exit 1; }

tmux -L "$SOCK" -f /dev/null new-session -d -s cost -x "$W" -y "$H" \
	"exec env TERM=xterm-256color XDG_CONFIG_HOME=$WORK/cfg $BIN --no-gpu --log $WORK/sim.log $URL"
sleep 5 # start-up and the first scrapes are not the steady state
PID=$(tmux -L "$SOCK" list-panes -t cost -F '#{pane_pid}')
tck=$(getconf CLK_TCK)
read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$PID/stat")
t0=$(date +%s.%N)
sleep "$SECS"
read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$PID/stat")
t1=$(date +%s.%N)
rss=$(awk '/VmRSS/{print $2}' "/proc/$PID/status")
awk -v u="$((u1 - u0 + s1 - s0))" -v tck="$tck" -v t0="$t0" -v t1="$t1" -v rss="$rss" -v w="$W" -v h="$H" 'BEGIN {
	cpu = u / tck; wall = t1 - t0
	printf "monitor at %dx%d against llmtop sim: %.2f cpu-s over %.1f s = %.2f %% of a core; RSS %.1f MB\n", w, h, cpu, wall, 100 * cpu / wall, rss / 1024
}'
