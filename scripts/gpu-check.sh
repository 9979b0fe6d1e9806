#!/usr/bin/env bash
# llmtop's GPU source against a real NVIDIA GPU: what it reads next to what
# nvidia-smi says at the same moment, idle and under load; what a refresh
# costs; the screen and the monitor's CPU on the GPU box.
#
# Two steps, because the GPU machine has no Go toolchain:
#   scripts/gpu-check.sh build        here: llmtop and the gpu package's test
#                                     binary (cgo, real libnvidia-ml) into .gpucheck/
#   scripts/gpu-check.sh run OUTDIR   there, in the repository's root, as root
#
# What run does (about 2½ minutes), each step's output appended to
# OUTDIR/log.txt:
#   1. nvidia-smi, llmtop version --json;
#   2. TestRealNVML idle (sources/gpu/real_nvml_test.go: every field against
#      nvidia-smi's --query-gpu, processes against --query-compute-apps);
#      BenchmarkRealNVMLRefresh (wall and CPU time of one refresh) and
#      BenchmarkRealNVMLCall (each NVML call);
#   3. llmtop sim and `llmtop snapshot --json` on it, idle (snapshot-idle.json);
#   4. a load: PyTorch holding 20 GiB and multiplying bf16 matrices for 75 s;
#      TestRealNVML and the snapshot again under it (snapshot-load.json);
#   5. the monitor in a 200×50 pseudo-terminal (util-linux script) on the
#      sim with its log: its screen (tui.typescript: replay it with `cat` in a
#      terminal of that size) and its CPU from every thread's schedstat over 20 s,
#      with the GPU under load, with the GPU idle, and with --no-gpu.
# Not part of CI (CI has no GPU).
set -uo pipefail
cd "$(dirname "$0")/.."
D=.gpucheck

case "${1:-}" in
build)
	mkdir -p "$D"
	grep -qx "/$D/" .git/info/exclude 2>/dev/null || { mkdir -p .git/info && echo "/$D/" >>.git/info/exclude; }
	export CGO_ENABLED=1 CGO_CFLAGS="-O2 -Wno-deprecated-declarations"
	go build -ldflags "-X main.version=$(git describe --tags --always --dirty) -X main.commit=$(git rev-parse HEAD)" -o "$D/llmtop" ./cmd/llmtop &&
		go test -c -o "$D/gpu.test" ./sources/gpu &&
		ls -l "$D"
	exit
	;;
run) OUT=${2:?usage: scripts/gpu-check.sh run OUTDIR} ;;
*)
	echo "usage: scripts/gpu-check.sh build | run OUTDIR" >&2
	exit 64
	;;
esac

mkdir -p "$OUT"
LOG=$OUT/log.txt
W=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$W"
}
trap cleanup EXIT
say() { printf '\n===== %s (%s)\n' "$*" "$(date -u +%T)" >>"$LOG"; }
run() { "$@" >>"$LOG" 2>&1; echo "exit $?" >>"$LOG"; }

say environment
run uname -a
run nvidia-smi
run "$D/llmtop" version --json
command -v script >>"$LOG" 2>&1 || echo "no script(1): the screen is not checked" >>"$LOG"
python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())' >>"$LOG" 2>&1

say "TestRealNVML, idle"
LLMTOP_REAL_NVML=1 run "$D/gpu.test" -test.run 'RealNVML' -test.v
say "what a refresh costs"
LLMTOP_REAL_NVML=1 run "$D/gpu.test" -test.run '^$' -test.bench 'RealNVMLRefresh' -test.count 3
LLMTOP_REAL_NVML=1 run "$D/gpu.test" -test.run '^$' -test.bench 'RealNVMLCall' -test.benchtime 200x

say "sim and snapshot, idle"
"$D/llmtop" sim --scenario healthy --port 0 --log-file "$W/sim.log" >"$W/sim.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "127.0.0.1:[0-9]" "$W/sim.out" 2>/dev/null && break; sleep 0.1; done
URL=$(grep -o "http://127.0.0.1:[0-9]*" "$W/sim.out" | head -1)
echo "sim at $URL" >>"$LOG"
"$D/llmtop" snapshot --json "$URL" >"$OUT/snapshot-idle.json" 2>>"$LOG"
run "$D/llmtop" snapshot "$URL"

say "load: 20 GiB held, bf16 matmuls for 75 s"
cat >"$W/load.py" <<'EOF'
import sys, time, torch
keep = torch.empty(20 << 30, dtype=torch.uint8, device="cuda")
x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
print("load started", flush=True)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for _ in range(20):
        y = x @ x
    torch.cuda.synchronize()
print("load ended", flush=True)
EOF
python3 "$W/load.py" 75 >>"$LOG" 2>&1 &
LOAD=$!
pids+=($LOAD)
for _ in $(seq 300); do grep -q "load started" "$LOG" && break; sleep 0.1; done
sleep 3
run nvidia-smi
say "TestRealNVML, under load"
LLMTOP_REAL_NVML=1 run "$D/gpu.test" -test.run 'RealNVML' -test.v
"$D/llmtop" snapshot --json "$URL" >"$OUT/snapshot-load.json" 2>>"$LOG"
run "$D/llmtop" snapshot "$URL"

# cost SECONDS FILE ARGS…: the monitor in a 200×50 pseudo-terminal for
# SECONDS, its CPU read from schedstat (ns) over the last 20 s of it.
cost() {
	local secs=$1 file=$2
	shift 2
	command -v script >/dev/null || return 0
	(sleep "$secs"; true) | TERM=xterm-256color script -qfec "stty rows 50 cols 200; exec $D/llmtop $*" "$file" >/dev/null 2>&1 &
	local sp=$!
	local pid=""
	for _ in $(seq 50); do pid=$(pgrep -n -f "^$D/llmtop $1") && break; sleep 0.1; done
	[ -n "$pid" ] || { echo "the monitor did not start" >>"$LOG"; return; }
	sleep $((secs - 21))
	local a b
	a=$(cat /proc/"$pid"/task/*/schedstat | awk '{s+=$1} END{print s}')
	sleep 20
	b=$(cat /proc/"$pid"/task/*/schedstat 2>/dev/null | awk '{s+=$1} END{print s}')
	echo "monitor $*: $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.3f %% of a core (%.1f ms CPU in 20 s)", (b-a)/20e9*100, (b-a)/1e6}') RSS $(awk '/VmRSS/{print $2, $3}' "/proc/$pid/status" 2>/dev/null)" >>"$LOG"
	kill "$pid" 2>/dev/null
	wait "$sp" 2>/dev/null
}

say "the monitor's screen and CPU, GPU under load"
cost 25 "$OUT/tui.typescript" --log "$W/sim.log" "$URL"
wait "$LOAD"
say "the monitor's CPU, GPU idle"
run nvidia-smi --query-gpu=utilization.gpu,power.draw,clocks.sm --format=csv
cost 24 /dev/null --log "$W/sim.log" "$URL"
say "the monitor's CPU, --no-gpu"
cost 24 /dev/null --no-gpu --log "$W/sim.log" "$URL"
nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE,MEMORY,ECC,PIDS >"$OUT/smi-q.txt" 2>&1
say done
