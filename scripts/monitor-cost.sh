#!/usr/bin/env bash
# The whole monitor's cost on the box it watches: runs `llmtop sim` and the
# monitor on it (1 s refresh, --no-gpu, the sim's log attached) in a tmux
# window of W×H, and reads the monitor's CPU time (utime+stime from
# /proc/PID/stat) and resident memory over SECONDS. Beside it, in the same
# run and a window of the same size, htop at the same refresh (-d 10: one
# second), measured the same way, so the two are compared on the same
# machine at the same moment (HTOP=0 leaves it out; htop is installed with
# apt-get when missing and this runs as root).
#
#   scripts/monitor-cost.sh [SECONDS]      (default 60; W=200 H=60)
#   make monitor-cost
#
# FLOOR=1 measures the floor the monitor approaches instead: one scrape and
# one frame a second, nothing else (no log attached, --no-host). FLOOR=go
# runs scripts/monitor-floor in llmtop's place: one GET of /metrics and one
# write of a frame's bytes a second in a Go program that does nothing else,
# what the runtime, the request and the terminal cost by themselves.
#
# GPU=1 reads a GPU instead of --no-gpu: the stand-in libnvidia-ml.so.1
# (scripts/dist/fakenvml.c, built here with gcc) as one busy GPU whose
# readings move every second, with the sim as its one compute process, so
# the GPU path's cost (NVML's calls through cgo, the snapshot's trip through
# the core and the rules, the GPU pane) shows on a machine without a GPU.
# Alternate GPU=1 and GPU=0 runs to compare them.
#
# Each line gives the CPU time twice: utime+stime from /proc/PID/stat (whole
# ticks of 10 ms, sampled) and schedstat's run time (nanoseconds, exact),
# with the context switches a second of all the process's threads (each a
# wake-up or a preemption: the monitor's cost is mostly its wake-ups).
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
# up to 30 s: under load (9 on two cores) the sim took more than 5 s
for _ in $(seq 300); do grep -q "127.0.0.1:[0-9]" "$WORK/sim.out" 2>/dev/null && break; sleep 0.1; done
URL=$(grep -o "http://127.0.0.1:[0-9]*" "$WORK/sim.out" | head -1)
[ -n "$URL" ] || { echo "monitor-cost: the sim printed no address"; exit 1; }

HTOP=${HTOP:-1}
if [ "$HTOP" = 1 ] && ! command -v htop >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		apt-get install -y -qq htop >/dev/null 2>&1 || (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq htop >/dev/null 2>&1) || true
	fi
	command -v htop >/dev/null || { echo "monitor-cost: htop is not installed (apt-get install htop); measuring llmtop alone"; HTOP=0; }
fi

WATCH="--log $WORK/sim.log" WHAT="its log attached, --no-gpu"
RUN="$BIN --no-gpu $WATCH $URL" NAME=llmtop ENV=""
if [ "${GPU:-0}" = 1 ]; then
	mkdir -p "$WORK/nvml"
	gcc -shared -fPIC -O2 -Wl,-soname,libnvidia-ml.so.1 -o "$WORK/nvml/libnvidia-ml.so.1" scripts/dist/fakenvml.c
	WHAT="its log attached, one busy stand-in GPU (scripts/dist/fakenvml.c) with the sim as its process"
	RUN="$BIN $WATCH $URL"
	ENV="LD_LIBRARY_PATH=$WORK/nvml FAKENVML_BUSY=1 FAKENVML_PID=$SIM"
fi
case "${FLOOR:-0}" in
1)
	WATCH="--no-host" WHAT="the floor: no log, --no-host, --no-gpu"
	RUN="$BIN --no-gpu $WATCH $URL"
	;;
go)
	go build -o "$WORK/monitor-floor" ./scripts/monitor-floor
	WHAT="scripts/monitor-floor in llmtop's place: one GET and one 12 kB write a second, nothing else"
	RUN="$WORK/monitor-floor $URL/metrics" NAME=floor
	;;
esac
tmux -L "$SOCK" -f /dev/null new-session -d -s cost -x "$W" -y "$H" \
	"exec env TERM=xterm-256color XDG_CONFIG_HOME=$WORK/cfg $ENV $RUN"
if [ "$HTOP" = 1 ]; then
	tmux -L "$SOCK" -f /dev/null new-session -d -s htop -x "$W" -y "$H" \
		"exec env TERM=xterm-256color HOME=$WORK htop -d 10"
fi
sleep 5 # start-up and the first scrapes are not the steady state
tck=$(getconf CLK_TCK)
# ticks PID: its utime+stime so far
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# sched PID: "RUN_NS SWITCHES" summed over its threads: the time on a CPU
# from schedstat (ns, exact where utime+stime are whole ticks sampled by
# the scheduler) and the context switches, voluntary and not (each one a
# wake-up or a preemption). A thread that ended meanwhile drops out of the
# sum; the Go runtime keeps its threads.
sched() {
	local ns=0 sw=0 t a b
	for t in /proc/"$1"/task/*; do
		read -r a _ _ <"$t/schedstat" 2>/dev/null || continue
		b=$(awk '/ctxt_switches/{s += $2} END {print s + 0}' "$t/status" 2>/dev/null || echo 0)
		ns=$((ns + a)) sw=$((sw + b))
	done
	echo "$ns $sw"
}
PID=$(tmux -L "$SOCK" list-panes -t cost -F '#{pane_pid}')
[ "$HTOP" = 1 ] && HPID=$(tmux -L "$SOCK" list-panes -t htop -F '#{pane_pid}')
a0=$(ticks "$PID") as0=$(sched "$PID")
[ "$HTOP" = 1 ] && h0=$(ticks "$HPID") hs0=$(sched "$HPID")
t0=$(date +%s.%N)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
sleep "$SECS"
a1=$(ticks "$PID") as1=$(sched "$PID")
[ "$HTOP" = 1 ] && h1=$(ticks "$HPID") hs1=$(sched "$HPID")
t1=$(date +%s.%N)
# report NAME TICKS PID "NS0 SW0" "NS1 SW1"
report() {
	awk -v name="$1" -v u="$2" -v tck="$tck" -v t0="$t0" -v t1="$t1" -v rss="$(awk '/VmRSS/{print $2}' "/proc/$3/status")" -v w="$W" -v h="$H" -v s0="$4" -v s1="$5" 'BEGIN {
		cpu = u / tck; wall = t1 - t0
		split(s0, a, " "); split(s1, b, " ")
		printf "%-7s at %dx%d, 1 s refresh: %.2f cpu-s over %.1f s = %.2f %% of a core; RSS %.1f MB; schedstat %.3f %%, %.1f context switches/s\n", name, w, h, cpu, wall, 100 * cpu / wall, rss / 1024, (b[1] - a[1]) / 1e7 / wall, (b[2] - a[2]) / wall
	}'
}
echo "monitor-cost: llmtop on llmtop sim ($WHAT)$([ "$HTOP" = 1 ] && echo ", htop -d 10 beside it in the same run"); load average $load0 at the start"
report "$NAME" "$((a1 - a0))" "$PID" "$as0" "$as1"
if [ "$HTOP" = 1 ]; then
	report htop "$((h1 - h0))" "$HPID" "$hs0" "$hs1"
	# the lower by schedstat's exact run time
	if [ $((${as1%% *} - ${as0%% *})) -le $((${hs1%% *} - ${hs0%% *})) ]; then echo "$NAME the lower"; else echo "htop the lower"; fi
fi
