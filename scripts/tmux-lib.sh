# Helpers shared by the tmux suites (e2e.sh, faults.sh): a tmux server of
# their own (-L $SOCK) with one session, e2e, running $BIN in $WORK. The
# caller sets SOCK, WORK, BIN and FAILS before sourcing this file.
screen() { tmux -L "$SOCK" capture-pane -p -t e2e 2>/dev/null || true; }
# keys K...: type keys one at a time; a pause after each keeps an Escape
# from merging with the next key into alt+key, as it would from a person.
keys() {
	for k in "$@"; do
		tmux -L "$SOCK" send-keys -t e2e "$k"
		sleep 0.15
	done
}
# wait_for TEXT [SECONDS]: poll the screen until TEXT shows
wait_for() {
	local deadline=$((SECONDS + ${2:-10}))
	while [ $SECONDS -lt $deadline ]; do
		screen | grep -qF -- "$1" && return 0
		sleep 0.1
	done
	return 1
}
check() { # check NAME TEXT [SECONDS]
	if wait_for "$2" "${3:-5}"; then
		echo "ok   $1"
	else
		echo "FAIL $1: \"$2\" not on screen:"
		screen | sed 's/^/     | /'
		FAILS=$((FAILS + 1))
	fi
}
check_absent() { # check_absent NAME TEXT
	sleep 0.3
	if screen | grep -qF -- "$2"; then
		echo "FAIL $1: \"$2\" still on screen"
		FAILS=$((FAILS + 1))
	else
		echo "ok   $1"
	fi
}
start() { # start W H ARGS...: run llmtop in a fresh tmux session
	local w=$1 h=$2
	shift 2
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	# NO_COLOR keeps capture-pane plain; XDG_CONFIG_HOME keeps the user's config out.
	# A server still shutting down from kill-server answers "server exited
	# unexpectedly": try again shortly.
	local try
	for try in 1 2 3 4 5; do
		tmux -L "$SOCK" -f /dev/null new-session -d -s e2e -x "$w" -y "$h" -c "$WORK" \
			"env TERM=xterm-256color NO_COLOR=1 XDG_CONFIG_HOME=$WORK/cfg $BIN $*; echo llmtop-exited-\$?; sleep 30" && break
		[ "$try" = 5 ] && { echo "e2e: tmux would not start a session"; exit 1; }
		sleep 0.3
	done
	tmux -L "$SOCK" set-option -t e2e window-size manual >/dev/null 2>&1 || true
}
resize() { tmux -L "$SOCK" resize-window -t e2e -x "$1" -y "$2"; }

