#!/usr/bin/env bash
# Issue 33's three lines measured in one go, ROUNDS times each (default 3),
# printing every round and the medians, with the load average beside them:
#
#   1. a day's recording (cmd/llmtop BenchmarkReplayDayOpen/Seek and
#      BenchmarkDiagnoseFromDay: open to the first frame, a seek's wall and
#      CPU time, the worst seek, diagnose --from);
#   2. the fleet refresh at 500 and 2 000 replicas through a fake Prometheus
#      (sources/prometheus BenchmarkFleetCost*: % of a core at a 5 s refresh);
#   3. the single-endpoint monitor against the sim at 200×60 with the log
#      attached (scripts/monitor-cost.sh, SECS seconds, default 60).
#
#   scripts/costs.sh            make costs
#   ROUNDS=5 SECS=30 ONLY=fleet scripts/costs.sh     (ONLY: day, fleet, monitor)
#
# A measurement, not a test: not in CI; the machine's other load shows in it
# (two shared cores here), so compare runs made at the same load.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-60}
ONLY=${ONLY:-day fleet monitor}
GO=${GO:-go}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

load() { cut -d' ' -f1-3 /proc/loadavg; }

# median FILE COLUMN-NAME: the median of the values a benchmark line gave
# for one unit (the number before the unit's name), over the rounds.
median() {
	awk -v unit="$2" '{ for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1) }' "$1" | sort -g |
		awk '{ v[n++] = $1 } END { if (n == 0) { print "-"; exit } print (n % 2) ? v[(n-1)/2] : (v[n/2-1] + v[n/2]) / 2 }'
}

bench() { # BIN PATTERN BENCHTIME OUT
	for r in $(seq "$ROUNDS"); do
		echo "  round $r, load $(load)"
		"$1" -test.run '^$' -test.bench "$2" -test.benchtime "$3" 2>&1 | grep --line-buffered '^Benchmark' | tee -a "$4" | sed 's/^/    /'
	done
}

summary() { # FILE NAME UNITS...
	local f=$1 name=$2
	shift 2
	grep "^$name-" "$f" >"$WORK/one" || return 0
	printf "  %-32s" "$name"
	for u in "$@"; do printf " %s %s," "$(median "$WORK/one" "$u")" "$u"; done
	echo " (medians of $(wc -l <"$WORK/one"))"
}

if [[ " $ONLY " == *" day "* ]]; then
	echo "== 1. a day's recording"
	$GO test -c -o "$WORK/llmtop.test" ./cmd/llmtop
	bench "$WORK/llmtop.test" 'ReplayDay(Open|Seek)$' 20x "$WORK/day"
	# a recording with this build's checkpoints (one without reads the day
	# from its start: about a minute a run)
	bench "$WORK/llmtop.test" 'DiagnoseFromDay/checkpoints' 3x "$WORK/day"
	echo "  medians:"
	summary "$WORK/day" BenchmarkReplayDayOpen median_ms median_cpu_ms
	summary "$WORK/day" BenchmarkReplayDaySeek median_ms max_ms median_cpu_ms max_cpu_ms index_MB
	summary "$WORK/day" BenchmarkDiagnoseFromDay/checkpoints median_ms median_cpu_ms peak_rss_MB
fi

if [[ " $ONLY " == *" fleet "* ]]; then
	echo "== 2. the fleet refresh"
	$GO test -c -o "$WORK/prom.test" ./sources/prometheus
	bench "$WORK/prom.test" 'FleetCost(500|2000)(Steady)?$' 10x "$WORK/fleet"
	echo "  medians:"
	for n in BenchmarkFleetCost500 BenchmarkFleetCost500Steady BenchmarkFleetCost2000 BenchmarkFleetCost2000Steady; do
		summary "$WORK/fleet" "$n" %core@5s cpu-ms/op judged/refresh
	done
fi

if [[ " $ONLY " == *" monitor "* ]]; then
	echo "== 3. the single-endpoint monitor"
	$GO build -o "$WORK/llmtop" ./cmd/llmtop
	for r in $(seq "$ROUNDS"); do
		BIN="$WORK/llmtop" HTOP=0 ./scripts/monitor-cost.sh "$SECS" | grep -E '^llmtop|load' | tee -a "$WORK/mon" | sed 's/^/    /'
	done
	echo "  medians:"
	grep -o 'schedstat [0-9.]*' "$WORK/mon" | awk '{print "x", $2, "sched%"}' >"$WORK/m1"
	grep -o 'RSS [0-9.]*' "$WORK/mon" | awk '{print "x", $2, "MB"}' >"$WORK/m2"
	echo "  monitor: schedstat $(median "$WORK/m1" 'sched%') % of a core, RSS $(median "$WORK/m2" MB) MB (medians of $(wc -l <"$WORK/m1"))"
fi
