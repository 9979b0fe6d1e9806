#!/usr/bin/env bash
# One full `make run` cycle in a real terminal: tmux runs `llmtop demo`
# zoomed on the diagnosis pane and reads, twice a second, the header's
# scenario badge ("SIMULATED · kv-pressure 0:40/1:15"), the endpoint badge
# and the top finding. For each load scenario the right finding must be the
# top one within LIMIT seconds of the segment's start, nothing from the
# previous scenario may sit above it once the new run serves, planned
# restarts never make a crash loop, and a cold start reads as starting, not
# down. Nothing stale leads (issue 31): while the engine is stopped or
# starting no finding judged from the ended run's numbers is on top, once
# it serves neither "engine starting" nor a metrics or down finding is,
# and a segment that has served for a while does not lead with the
# previous segment's finding. The next cycle's healthy segment leads with
# no WARN or CRIT once it serves, and a quick benchmark (`b`) run beside
# the demo's own traffic raises no proxy finding. The routed stretch
# (issue 26: routed-starved, a router in front of prefill and decode pools
# beside the demo's engine) opens the fleet view by itself, shows router →
# pools → replicas and the starved-pool finding within LIMIT seconds, and
# as it ends the screen is the demo's engine's again with none of the
# fleet's findings on it. Called by scripts/e2e.sh; about 11 minutes, at
# 120×40 (COLS/ROWS change it: 80×24 works too).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/bin/llmtop}
LIMIT=${LIMIT:-45}
SOCK=llmtop-e2e-cycle-$$
WORK=$(mktemp -d)
mkdir -p "$WORK/tmp"
FAILS=0
cleanup() {
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

start() { # start ARGS...: llmtop in a fresh COLS×ROWS (120×40) session, diagnosis zoomed
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	sleep 0.3
	tmux -L "$SOCK" -f /dev/null new-session -d -s c -x "${COLS:-120}" -y "${ROWS:-40}" -c "$WORK" \
		"env TERM=xterm-256color NO_COLOR=1 XDG_CONFIG_HOME=$WORK/cfg XDG_STATE_HOME=$WORK/state TMPDIR=$WORK/tmp $BIN $*; sleep 30"
	tmux -L "$SOCK" set-option -t c window-size manual >/dev/null 2>&1 || true
	local i
	for i in $(seq 1 100); do
		tmux -L "$SOCK" capture-pane -p -t c 2>/dev/null | grep -q "SIMULATED" && break
		sleep 0.1
	done
	tmux -L "$SOCK" send-keys -t c 6
}
screen() { tmux -L "$SOCK" capture-pane -p -t c 2>/dev/null || true; }
secs() { # m:ss → seconds
	local m=${1%%:*} s=${1##*:}
	echo $((10#$m * 60 + 10#$s))
}

# The finding each load scenario should put on top.
declare -A want=(
	[queue-buildup]="^(WARN|CRIT) TTFT over SLO: requests wait in the queue"
	[kv-pressure]="^(WARN|CRIT) (KV pressure|KV cache full)"
	[long-prompts]="^(WARN|CRIT) .*(long prefill|prefill\) dominates)"
	[decode-bound]="^(WARN|CRIT) .*(decode-bound|ITL over SLO|TPOT over SLO)"
	[crash-restart]="^(WARN|CRIT) .*(crash|illegal memory access|engine died|EngineDead)"
	[metrics-broken]="^(WARN|CRIT) metrics endpoint"
	[routed-starved]="(WARN|CRIT) .*decode workers .*idle"
)
# The routed stretch: read from the fleet view, which covers the diagnosis.
routed_topology="" routed_closed="" routed_left=""
declare -A found
prev="" seg="" restarted=0 seen_segments="" last_top="" cycle=1 served_at=-1 stale_reported="" bench_at="" ran="" proxy=0
# metrics-judged findings: from the ended run's numbers while stopped or starting
judged="(queue backlog|KV pressure|KV cache full|TTFT over SLO|ITL (over|spikes)|decode-bound|prefill)"
start demo
deadline=$((SECONDS + 720))
echo "e2e-cycle: watching one demo cycle (limit ${LIMIT}s per scenario)"
while [ $SECONDS -lt $deadline ]; do
	s=$(screen)
	head=$(printf '%s\n' "$s" | sed -n 1p)
	# the zoomed diagnosis' first line: under its box's top edge (the
	# top-finding line(s) under the header move it down)
	top=$(printf '%s\n' "$s" | awk '/━ 6 Diagnosis/ { getline; print; exit }' | sed 's/^┃//; s/ *┃$//')
	badge=$(printf '%s' "$head" | grep -o 'SIMULATED · [a-z+-]* [0-9]*:[0-9]*' || true)
	if [ -z "$badge" ]; then
		sleep 0.5
		continue
	fi
	name=$(printf '%s' "$badge" | awk '{print $3}')
	el=$(secs "$(printf '%s' "$badge" | awk '{print $4}')")
	state=$(printf '%s' "$head" | awk '{print $2}')
	if [ "$name" != "$seg" ]; then
		[ -n "$seg" ] && prev=$seg
		seg=$name
		if [ "$name" = healthy ] && [ -n "$prev" ]; then
			cycle=2 # the cycle came round: watch its healthy segment, then stop
		elif [ $cycle = 2 ]; then
			break
		fi
		seen_segments="$seen_segments $name"
		restarted=0
		echo "  -- $name"
	fi
	[ "$state" = STARTING ] && restarted=1
	stale() { # stale WHY: report once per segment
		if [ "$stale_reported" != "$seg$cycle" ]; then
			echo "FAIL $seg ${el}s (cycle $cycle): $1: $top"
			FAILS=$((FAILS + 1))
			stale_reported="$seg$cycle"
		fi
	}
	case "$state" in
	UP | RESTARTED) [ $served_at -lt 0 ] && served_at=$el ;;
	*) served_at=-1 ;;
	esac
	case "$state" in
	STOPPED | STARTING)
		printf '%s' "$top" | grep -qE "^(WARN|CRIT) $judged" && stale "the ended run's finding on top while $state"
		;;
	UP | RESTARTED)
		if [ $((el - served_at)) -ge 5 ] && printf '%s' "$top" | grep -qE "^(INFO|WARN|CRIT) (engine starting|metrics endpoint|endpoint down)"; then
			stale "an ended condition on top of an engine serving for $((el - served_at))s"
		fi
		;;
	esac
	if [ "$el" -ge 20 ] && [ -n "$prev" ] && [ -n "${want[$prev]:-}" ] && [ "${want[$prev]}" != "${want[$seg]:-}" ] &&
		printf '%s' "$top" | grep -qE "${want[$prev]}" && ! printf '%s' "$top" | grep -qE "${want[$seg]:-^$}"; then
		stale "the previous segment's finding still on top"
	fi
	if [ $cycle = 2 ] && [ "$name" = healthy ] && [ $served_at -ge 0 ] && [ $((el - served_at)) -ge 15 ] &&
		printf '%s' "$top" | grep -qE "^(WARN|CRIT) "; then
		stale "the healthy segment leads with a warning"
	fi
	if [ "$top" != "$last_top" ]; then
		echo "     ${el}s $state: ${top:0:110}"
		last_top=$top
	fi
	# A quick benchmark (b, enter) beside the demo's own traffic, in the
	# first healthy segment once it has served 15 s: the server's numbers
	# mix in that traffic, so no "client sees much worse latency" (a
	# proxy) may come of it. Closed (esc) once its result shows.
	if [ $cycle = 1 ] && [ "$name" = healthy ] && [ -z "$bench_at" ] && [ $served_at -ge 0 ] && [ "$el" -ge 15 ]; then
		tmux -L "$SOCK" send-keys -t c b
		sleep 1
		tmux -L "$SOCK" send-keys -t c Enter
		bench_at=$SECONDS
		echo "     ${el}s: b (quick benchmark) started"
	fi
	if [ -n "$bench_at" ]; then
		printf '%s' "$s" | grep -q "client sees much worse latency" && proxy=1
		if [ -z "$ran" ]; then
			ran=$(printf '%s\n' "$s" | grep -o "completed [0-9]* *failed [0-9]*" | head -1)
			[ -n "$ran" ] && tmux -L "$SOCK" send-keys -t c Escape && echo "     ${el}s: benchmark done: $ran"
		fi
	fi
	case "$top" in
	*"crash loop"*)
		echo "FAIL $seg ${el}s: a crash loop on the demo's planned restarts: $top"
		FAILS=$((FAILS + 1))
		;;
	esac
	if [ -n "${want[$seg]:-}" ] && [ -z "${found[$seg]:-}" ] && printf '%s' "$top" | grep -qE "${want[$seg]}"; then
		found[$seg]=$el
	fi
	if [ "$seg" = routed-starved ]; then
		# The fleet view, opened by the demo: routers above the pools,
		# and the starved pool's finding among the fleet's.
		fleet=$(printf '%s\n' "$s" | sed -n '/━ Fleet ━/,$p')
		r=$(printf '%s\n' "$fleet" | grep -nF "▸ routers" | head -1 | cut -d: -f1)
		d=$(printf '%s\n' "$fleet" | grep -nF "· decode ·" | head -1 | cut -d: -f1)
		if [ -z "$routed_topology" ] && [ -n "$r" ] && [ -n "$d" ] && [ "$r" -lt "$d" ]; then
			routed_topology=$el
			echo "     ${el}s: the fleet view shows router → pools → replicas"
		fi
		if [ -z "${found[$seg]:-}" ] && printf '%s\n' "$fleet" | grep -qE "${want[$seg]}"; then
			found[$seg]=$el
			echo "     ${el}s: $(printf '%s\n' "$fleet" | grep -oE "${want[$seg]}.*" | head -1 | sed 's/ *┃$//' | cut -c1-100)"
		fi
	elif [ "$prev" = routed-starved ] && [ -z "$routed_left" ] && [ "$el" -ge 5 ]; then
		# The stretch ended: the demo's engine on screen again, zoomed
		# as it was, the fleet view closed.
		routed_left=$el
		if printf '%s\n' "$s" | grep -q "━ 6 Diagnosis" && ! printf '%s\n' "$s" | grep -q "━ Fleet ━"; then
			routed_closed=1
		else
			echo "FAIL $seg ${el}s: the fleet view is still open (or the diagnosis gone) after the routed stretch:"
			printf '%s\n' "$s" | sed 's/^/     | /'
			FAILS=$((FAILS + 1))
		fi
	fi
	# Once the scenario's new run serves (it restarted the engine), the
	# previous scenario's finding must not sit on top (unless it is this
	# scenario's too).
	if [ $restarted = 1 ] && [ -n "$prev" ] && [ -n "${want[$prev]:-}" ] && [ "$state" != STARTING ] && [ "${want[$prev]}" != "${want[$seg]:-}" ] &&
		printf '%s' "$top" | grep -qE "${want[$prev]}" && ! printf '%s' "$top" | grep -qE "${want[$seg]:-^$}"; then
		echo "FAIL $seg ${el}s: the previous scenario's finding sits on top: $top"
		FAILS=$((FAILS + 1))
		prev="" # once is enough
	fi
	sleep 0.5
done
# The quick benchmark started in the first healthy segment: its result
# came, and no proxy was blamed for the demo's own traffic.
if [ $proxy = 1 ]; then
	echo "FAIL bench: 'client sees much worse latency' (a proxy) from b beside the demo's own traffic"
	screen | sed 's/^/     | /'
	FAILS=$((FAILS + 1))
elif [ -z "$ran" ]; then
	echo "FAIL bench: b showed no result in 45 s"
	screen | sed 's/^/     | /'
	FAILS=$((FAILS + 1))
else
	echo "ok   bench: b beside the demo's traffic ($ran) raised no proxy finding"
fi
# The demo's simulated runs stay out of the user's benchmark history (they
# were listed under "Other targets" beside a real engine's); they go to the
# demo's own folder under $TMPDIR.
if [ -n "$ran" ]; then
	if ls "$WORK"/state/llmtop/bench/*.json >/dev/null 2>&1; then
		echo "FAIL bench: the demo's result went into the user's history: $(ls "$WORK"/state/llmtop/bench)"
		FAILS=$((FAILS + 1))
	elif ! ls "$WORK"/tmp/llmtop-demo-*/bench/*.json >/dev/null 2>&1; then
		echo "FAIL bench: the demo's result was not saved in its own folder under \$TMPDIR"
		FAILS=$((FAILS + 1))
	else
		echo "ok   bench: the demo's result saved in its own folder, not the user's history"
	fi
fi

if [ -n "$routed_topology" ]; then
	echo "ok   routed-starved: the fleet view opened by itself with router → pools → replicas at ${routed_topology}s"
else
	echo "FAIL routed-starved: the fleet view never showed router → pools → replicas (segments seen:$seen_segments)"
	FAILS=$((FAILS + 1))
fi
[ -n "$routed_closed" ] && echo "ok   routed-starved: after it the screen is the demo's engine's again (fleet view closed)"
[ -z "$routed_left" ] && { echo "FAIL routed-starved: the cycle never left the routed stretch"; FAILS=$((FAILS + 1)); }

for s in routed-starved queue-buildup kv-pressure long-prompts decode-bound crash-restart metrics-broken; do
	if [ -z "${found[$s]:-}" ]; then
		echo "FAIL $s: \"${want[$s]}\" never on top (segments seen:$seen_segments)"
		FAILS=$((FAILS + 1))
	elif [ "${found[$s]}" -gt "$LIMIT" ]; then
		echo "FAIL $s: the right finding took ${found[$s]}s (limit ${LIMIT}s)"
		FAILS=$((FAILS + 1))
	else
		echo "ok   $s: right finding on top at ${found[$s]}s"
	fi
done

# A cold start with its log attached reads as starting, never as down.
start demo --scenario cold-start --startup-time 20s
down=0 starting=0
for i in $(seq 1 30); do
	s=$(screen)
	# The badge and the top finding: a start is never called down.
	printf '%s\n' "$s" | sed -n 1p | grep -q " DOWN " && down=1
	printf '%s\n' "$s" | sed -n 4p | grep -q "endpoint down" && down=1
	printf '%s\n' "$s" | sed -n 1p | grep -q "STARTING" && printf '%s\n' "$s" | grep -q "engine starting" && starting=1
	sleep 0.5
done
if [ $starting = 1 ] && [ $down = 0 ]; then
	echo "ok   cold start: STARTING and 'engine starting', never DOWN or 'endpoint down' on top"
else
	echo "FAIL cold start: starting seen=$starting, 'endpoint down' seen=$down"
	screen | sed 's/^/     | /'
	FAILS=$((FAILS + 1))
fi

if [ "$FAILS" -gt 0 ]; then
	echo "e2e-cycle: $FAILS check(s) failed"
	exit 1
fi
echo "e2e-cycle: all checks passed"
