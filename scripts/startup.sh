#!/usr/bin/env bash
# Start-up cost: how long `llmtop --version` takes, and how long from exec
# to the first full frame of the monitor (its footer drawn) in a 200×60
# pseudo-terminal, watching an endpoint that does not answer (no network
# wait in the figure: the frame must not wait for a scrape). Median of N
# runs each (default 15). A measurement, not a test: the machine's other
# load shows in it; `make bench` runs it after the Go benchmarks.
#
#   scripts/startup.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/bin/llmtop}
N=${1:-15}
[ -x "$BIN" ] || { echo "startup: $BIN missing: run make build"; exit 1; }
command -v python3 >/dev/null || { echo "startup: python3 missing"; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 - "$BIN" "$N" "$WORK" <<'PY'
import fcntl, os, pty, select, signal, statistics, struct, subprocess, sys, termios, time

binary, n, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
env = dict(os.environ, TERM="xterm-256color", NO_COLOR="1", XDG_CONFIG_HOME=work + "/cfg")

def version():
    t = time.perf_counter()
    subprocess.run([binary, "--version"], stdout=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - t

def first_frame():
    # port 9 (discard) on loopback: nothing listens, the scrape fails fast
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(binary, [binary, "--no-gpu", "http://127.0.0.1:9"], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 200, 0, 0))
    t = time.perf_counter()
    buf, took = b"", None
    while time.perf_counter() - t < 5:
        r, _, _ = select.select([fd], [], [], 0.05)
        if not r:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        buf += chunk
        if b"quit" in buf:  # the footer: the frame's last line
            took = time.perf_counter() - t
            break
    os.kill(pid, signal.SIGTERM)
    os.waitpid(pid, 0)
    os.close(fd)
    return took

v = [version() for _ in range(n)]
f = [x for x in (first_frame() for _ in range(n)) if x is not None]
ms = lambda xs: "%.1f ms (min %.1f, max %.1f)" % (1000 * statistics.median(xs), 1000 * min(xs), 1000 * max(xs))
print("llmtop --version: median " + ms(v) + f" over {n} runs (target ≤ 30 ms)")
if f:
    print("first full frame at 200x60 from exec: median " + ms(f) + f" over {len(f)} runs (target ≤ 150 ms)")
else:
    print("first full frame: none seen within 5 s")
    sys.exit(1)
PY
