package procfs

import (
	"bufio"
	"bytes"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// maxProcs bounds the processes looked at (a box with tens of thousands of
// threads must not cost a second of CPU per look).
const maxProcs = 4096

// Owner says who holds a local TCP port while nothing answers on it: the
// process listening there (PID 0 when none is, or when its file
// descriptors cannot be read), and the processes that look like inference
// engines, oldest first. It never fails: what cannot be read is left out,
// and Note says why when that matters.
func Owner(fsys fs.FS, port int, now time.Time) model.PortOwner {
	o, _ := OwnerAt(fsys, port, now)
	return o
}

// OwnerAt is Owner with the socket its holder listens at (zero when none
// was found), for a caller that follows the holder afterwards with
// Socket.HeldBy instead of reading the kernel's socket tables again.
func OwnerAt(fsys fs.FS, port int, now time.Time) (model.PortOwner, Socket) {
	o := model.PortOwner{Port: port, Time: now}
	var sock Socket
	inodes := listening(fsys, port)
	pids := pidsOf(fsys)
	boot, bootOK := bootTime(fsys)
	for _, pid := range pids {
		raw, err := fs.ReadFile(fsys, strconv.Itoa(pid)+"/cmdline")
		if err != nil {
			continue
		}
		args := model.SplitCmdline(raw)
		if len(args) == 0 {
			continue
		}
		// Shown on screen and in snapshots: an engine's command line
		// can carry --api-key or a token, and any bytes at all.
		cmd := model.RedactCmdline(strings.Join(args, " "))
		holder := false
		if len(inodes) > 0 && o.PID == 0 {
			sock, holder = holding(fsys, pid, inodes)
		}
		if holder {
			o.PID, o.Cmdline = pid, cmd
		}
		// An engine process counts for this port when it holds it, or
		// when its command line (or its engine's default) names it.
		if eng := EngineOf(args); eng != model.Unknown && (holder || servesOn(args, eng, port)) {
			p := model.Process{PID: pid, Cmdline: cmd}
			if bootOK {
				if st, ok := StartTicks(fsys, pid); ok {
					p.Age = now.Sub(boot.Add(time.Duration(st) * time.Second / clockTicks))
				}
			}
			o.Engines = append(o.Engines, p)
		}
	}
	if o.PID > 0 {
		o.Stopped = stopped(fsys, o.PID)
	}
	if o.PID > 0 && bootOK {
		if st, ok := StartTicks(fsys, o.PID); ok {
			o.Started = boot.Add(time.Duration(st) * time.Second / clockTicks)
		}
	}
	sort.SliceStable(o.Engines, func(i, j int) bool { return o.Engines[i].Age > o.Engines[j].Age })
	switch {
	case Nested(fsys) == 1:
		o.Note = "llmtop runs in a container's PID namespace: the host's processes are not visible (--pid=host / hostPID: true)"
	case len(inodes) > 0 && o.PID == 0:
		o.Note = "a process listens but its file descriptors are not readable (another user: run as root to see which)"
	}
	return o, sock
}

// clockTicks is USER_HZ, 100 on every Linux llmtop runs on.
const clockTicks = 100

// Socket is where a process holds a listening socket: the file
// descriptor and the socket's inode.
type Socket struct {
	FD    string
	Inode string
}

// Listener finds the socket pid listens on port with (ok false when it
// holds none): a known owner checked without reading every process
// (Owner's cost on a busy machine). It reads the kernel's socket tables
// (net/tcp, net/tcp6), whose read walks every connection on the machine:
// a few milliseconds of CPU on a busy one, so a known socket is rechecked
// with HeldBy instead.
func Listener(fsys fs.FS, pid, port int) (Socket, bool) {
	inodes := listening(fsys, port)
	if len(inodes) == 0 {
		return Socket{}, false
	}
	return holding(fsys, pid, inodes)
}

// Holds reports whether pid holds a socket listening on port.
func Holds(fsys fs.FS, pid, port int) bool {
	_, ok := Listener(fsys, pid, port)
	return ok
}

// HeldBy reports whether pid still has the socket open at its file
// descriptor: one readlink. A listening socket keeps its port until it is
// closed, so a process that still has it open still holds the port.
func (s Socket) HeldBy(fsys fs.FS, pid int) bool {
	if s.FD == "" || s.Inode == "" {
		return false
	}
	target, err := fs.ReadLink(fsys, strconv.Itoa(pid)+"/fd/"+s.FD)
	return err == nil && target == "socket:["+s.Inode+"]"
}

// listening returns the socket inodes listening on port (IPv4 and IPv6).

func listening(fsys fs.FS, port int) map[string]bool {
	out := map[string]bool{}
	want := strings.ToUpper(strconv.FormatInt(int64(port), 16))
	for len(want) < 4 {
		want = "0" + want
	}
	eachListener(fsys, func(_, p, inode string) {
		if p == want {
			out[inode] = true
		}
	})
	return out
}

// eachListener calls f with the local address, the port (both as the
// kernel writes them: hex) and the inode of every listening TCP socket
// (IPv4 and IPv6). The tables hold every connection on the machine
// (thousands where tests or a proxy churn them: 600 kB here): they are
// streamed through one buffer and a line becomes strings only when its
// socket listens (a string per field of every line was 4 MB of garbage a
// read, three reads as the monitor starts).
func eachListener(fsys fs.FS, f func(addr, port, inode string)) {
	for _, name := range []string{"net/tcp", "net/tcp6"} {
		file, err := fsys.Open(name)
		if err != nil {
			continue
		}
		r := bufio.NewReaderSize(file, 32<<10)
		for {
			line, err := r.ReadSlice('\n')
			if err == bufio.ErrBufferFull {
				for err == bufio.ErrBufferFull { // no table line is this long: skip it
					_, err = r.ReadSlice('\n')
				}
				continue
			}
			if len(line) > 0 {
				listener(line, f)
			}
			if err != nil {
				break
			}
		}
		file.Close()
	}
}

// listener calls f for one line of a socket table when its socket listens:
// "sl local_address rem_address st … uid timeout inode …", st 0A.
func listener(line []byte, f func(addr, port, inode string)) {
	var fl [10][]byte
	n := 0
	for n < len(fl) {
		line = bytes.TrimLeft(line, " \t\r\n")
		if len(line) == 0 {
			break
		}
		end := bytes.IndexAny(line, " \t\r\n")
		if end < 0 {
			end = len(line)
		}
		fl[n], line = line[:end], line[end:]
		n++
	}
	if n < len(fl) || string(fl[3]) != "0A" { // 0A: TCP_LISTEN
		return
	}
	if addr, p, ok := bytes.Cut(fl[1], []byte(":")); ok {
		f(string(addr), string(p), string(fl[9]))
	}
}

// pidsOf lists the numeric entries of /proc, at most maxProcs.
func pidsOf(fsys fs.FS) []int {
	ents, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			out = append(out, pid)
			if len(out) == maxProcs {
				break
			}
		}
	}
	return out
}

// holding finds the file descriptor at which pid has one of the socket
// inodes open.
func holding(fsys fs.FS, pid int, inodes map[string]bool) (Socket, bool) {
	dir := strconv.Itoa(pid) + "/fd"
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return Socket{}, false
	}
	for _, e := range ents {
		target, err := fs.ReadLink(fsys, dir+"/"+e.Name())
		if err != nil {
			continue
		}
		if in, ok := strings.CutPrefix(target, "socket:["); ok && inodes[strings.TrimSuffix(in, "]")] {
			return Socket{FD: e.Name(), Inode: strings.TrimSuffix(in, "]")}, true
		}
	}
	return Socket{}, false
}

// bootTime is /proc/stat's btime.
func bootTime(fsys fs.FS) (time.Time, bool) {
	b, err := fs.ReadFile(fsys, "stat")
	if err != nil {
		return time.Time{}, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return time.Unix(s, 0), true
			}
		}
	}
	return time.Time{}, false
}

// StartTicks is field 22 of /proc/<pid>/stat: the start time in clock
// ticks after boot.
func StartTicks(fsys fs.FS, pid int) (int64, bool) {
	f := statFields(fsys, pid)
	if len(f) < 20 { // field 3 is f[0]; field 22 is f[19]
		return 0, false
	}
	v, err := strconv.ParseInt(f[19], 10, 64)
	return v, err == nil
}

// statFields are /proc/<pid>/stat's fields from the third (the state) on,
// nil when unreadable. The command name (field 2) may hold spaces and
// parentheses: the fields are counted after its last ')'.
func statFields(fsys fs.FS, pid int) []string {
	b, err := fs.ReadFile(fsys, strconv.Itoa(pid)+"/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// stopped reports whether pid is stopped (state T: SIGSTOP, or t: a
// debugger): it holds its port, the kernel accepts connections on it, and
// nothing answers them.
func stopped(fsys fs.FS, pid int) bool {
	f := statFields(fsys, pid)
	return len(f) > 0 && (f[0] == "T" || f[0] == "t")
}
