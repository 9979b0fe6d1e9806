#!/usr/bin/env bash
# Runs every committed Go fuzz target for FUZZTIME (default 30s) each and
# prints the executions per target. A target that fails leaves its input
# under the package's testdata/fuzz/ (commit it: it becomes a regression
# test that plain `go test` runs) and makes this script fail.
set -uo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-30s}
GO=${GO:-go}
targets=(
	model:FuzzSanitize
	exporter:FuzzCollectorLabels
	sources/engine:FuzzParseProm
	sources/engine:FuzzFastParse
	sources/engine:FuzzAdapterMapping
	sources/engine:FuzzSlots
	sources/engine:FuzzOllama
	sources/bench:FuzzSSEReader
	sources/logs:FuzzLogLine
	sources/logs:FuzzLogLatency
	sources/prometheus:FuzzPromAnswer
	sources/prometheus:FuzzPromValues
	recording:FuzzReader
	tui:FuzzParseConfig
)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failed=()
count() { find "$1" -type f 2>/dev/null | wc -l; }
for t in "${targets[@]}"; do
	pkg=${t%%:*} fn=${t##*:}
	before=$(count "$pkg/testdata/fuzz/$fn")
	# -fuzzminimizetime bounds the minimisation of each new input (60 s
	# by default, which stalls a short run on the large real captures).
	"$GO" test -run '^$' -fuzz "^${fn}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 100x "./$pkg" >"$out" 2>&1
	rc=$?
	execs=$(grep -o 'execs: [0-9]*' "$out" | tail -n 1 | cut -d' ' -f2)
	if [ $rc -eq 0 ]; then
		printf '%-20s %-16s %10s execs in %s\n' "$fn" "$pkg" "${execs:-?}" "$FUZZTIME"
	elif [ "$(count "$pkg/testdata/fuzz/$fn")" = "$before" ] && grep -q 'context deadline exceeded' "$out" && ! grep -q 'Failing input written\|panic:' "$out"; then
		# Go's fuzz coordinator can report its own -fuzztime deadline as a
		# failure on a busy machine (golang/go#75804, fixed in Go 1.27):
		# no failing input was written, so it is not one.
		printf '%-20s %-16s %10s execs in %s (deadline race golang/go#75804, no failing input)\n' "$fn" "$pkg" "${execs:-?}" "$FUZZTIME"
	else
		cat "$out"
		printf '%-20s %-16s FAILED\n' "$fn" "$pkg"
		failed+=("$fn")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz targets failed: ${failed[*]}"
	exit 1
fi
