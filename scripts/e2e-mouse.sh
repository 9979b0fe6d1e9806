#!/usr/bin/env bash
# The mouse in a real terminal: tmux runs `llmtop demo`, and the test types
# the SGR mouse reports a terminal sends (ESC [ < b ; x ; y M/m, 1-based)
# into the pane: a click focuses a pane, a double click zooms it, the wheel
# scrolls the log view. `make e2e-mouse` builds the binary and runs this.
#
# Uses its own tmux server (-L), so it never touches the user's sessions.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${BIN:-$ROOT/bin/llmtop}
SOCK=llmtop-mouse-$$
WORK=$(mktemp -d)
FAILS=0

command -v tmux >/dev/null || { echo "e2e-mouse: tmux missing: run make deps"; exit 1; }
command -v python3 >/dev/null || { echo "e2e-mouse: python3 missing (it finds text on the screen)"; exit 1; }
[ -x "$BIN" ] || { echo "e2e-mouse: $BIN missing: run make build"; exit 1; }
cleanup() {
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT
# shellcheck source=tmux-lib.sh
. "$ROOT/scripts/tmux-lib.sh"

# at TEXT: the 1-based column and row (in cells, not bytes) where TEXT
# first shows
at() {
	screen | python3 -c 'import sys
t = sys.argv[1]
for n, l in enumerate(sys.stdin.read().split("\n"), 1):
    if t in l:
        print(l.index(t) + 1, n)
        break' "$1"
}
# sgr B X Y: press and release button code B at X, Y (1-based)
sgr() {
	tmux -L "$SOCK" send-keys -t e2e -l $'\e'"[<$1;$2;$3M"
	[ "$1" -ge 64 ] || tmux -L "$SOCK" send-keys -t e2e -l $'\e'"[<$1;$2;$3m"
}

start 200 60 demo
check "demo starts" "SIMULATED" 20
sleep 1

read -r X Y <<<"$(at '5 Events')"
sgr 0 $((X + 2)) $((Y + 3)) # a click inside the Events box
check "a click focuses the pane (thick border)" "┏━ 5 Events"

sleep 0.6 # a new click, not the second of a double click
sgr 0 $((X + 2)) $((Y + 3))
sleep 0.05
sgr 0 $((X + 2)) $((Y + 3))
sleep 0.5
if screen | grep -qF "1 Latency"; then
	echo "FAIL a double click zooms the pane: the grid is still there"
	screen | sed 's/^/     | /'
	FAILS=$((FAILS + 1))
else
	check "a double click zooms the pane" "┏━ 5 Events"
fi

keys Escape l
check "the log view opens" "following"
sgr 64 20 20 # wheel up
check "the wheel scrolls the log view (leaves follow)" "paused (F follows)"

if [ "$FAILS" -gt 0 ]; then
	echo "e2e-mouse: $FAILS check(s) failed"
	exit 1
fi
echo "e2e-mouse: all checks passed"
