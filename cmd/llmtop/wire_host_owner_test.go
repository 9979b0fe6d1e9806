package main

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/host"
)

// countingFS counts the command lines read (what a look among every
// process costs) and the reads of the kernel's socket tables (whose read
// walks every connection on the machine).
type countingFS struct {
	fstest.MapFS
	cmdlines, tables int
}

func (c *countingFS) count(name string) {
	if strings.HasSuffix(name, "/cmdline") {
		c.cmdlines++
	}
	if strings.HasPrefix(name, "net/tcp") {
		c.tables++
	}
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.count(name)
	return c.MapFS.Open(name)
}

func (c *countingFS) ReadFile(name string) ([]byte, error) {
	c.count(name)
	return c.MapFS.ReadFile(name)
}

// A known port owner is checked by its own sockets, not by reading every
// process, and a port handed to another process is still found.
func TestHostOwnerIsRecheckedByItsSockets(t *testing.T) {
	proc := &countingFS{MapFS: fstest.MapFS{
		"stat":         {Data: []byte("cpu  1 2 3\nbtime 1799999000\n")},
		"net/tcp":      {Data: []byte("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1\n")},
		"5000/cmdline": {Data: []byte("/opt/llama-server\x00--port\x008000\x00")},
		"5000/stat":    {Data: []byte("5000 (llama-server) S 1 5000 5000 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99000 1 1")},
		"5000/fd/3":    {Data: []byte("socket:[222]"), Mode: fs.ModeSymlink},
		"6000/cmdline": {Data: []byte("bash\x00")},
		"6000/stat":    {Data: []byte("6000 (bash) S 1 6000 6000 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99000 1 1")},
	}}
	tg := &hostTarget{look: newPortLook("http://127.0.0.1:8000")}
	now := time.Unix(1_800_000_000, 0)
	tg.resolve(proc, now)
	if tg.pid != 5000 || proc.cmdlines == 0 {
		t.Fatalf("owner %d after %d command lines read, want 5000 found among the processes", tg.pid, proc.cmdlines)
	}
	for i := 1; i <= 40; i++ { // 2 minutes of looks every 3 s
		proc.cmdlines = 0
		tg.resolve(proc, now.Add(time.Duration(i)*hostEvery))
		if tg.pid != 5000 || proc.cmdlines != 0 {
			t.Fatalf("look %d: owner %d, %d command lines read, want 5000 and none", i, tg.pid, proc.cmdlines)
		}
	}
	// the port goes to 6000 while 5000 lives on
	delete(proc.MapFS, "5000/fd/3")
	proc.MapFS["6000/fd/7"] = &fstest.MapFile{Data: []byte("socket:[222]"), Mode: fs.ModeSymlink}
	tg.resolve(proc, now.Add(41*hostEvery+ownerEvery))
	if tg.pid != 6000 {
		t.Fatalf("owner %d after the port moved, want 6000", tg.pid)
	}
}

// A known owner still holding its listening socket is rechecked with one
// readlink: the socket tables are read once to learn where it holds the
// port, not every ownerEvery (their read walks every connection on the
// machine: ~5 ms of CPU, a tenth of the monitor's steady second). A socket
// closed and opened again elsewhere in the process is found again.
func TestHostOwnerRecheckReadsNoSocketTable(t *testing.T) {
	proc := &countingFS{MapFS: fstest.MapFS{
		"stat":         {Data: []byte("cpu  1 2 3\nbtime 1799999000\n")},
		"net/tcp":      {Data: []byte("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1\n")},
		"5000/cmdline": {Data: []byte("/opt/llama-server\x00--port\x008000\x00")},
		"5000/stat":    {Data: []byte("5000 (llama-server) S 1 5000 5000 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99000 1 1")},
		"5000/fd/3":    {Data: []byte("socket:[222]"), Mode: fs.ModeSymlink},
	}}
	tg := &hostTarget{look: newPortLook("http://127.0.0.1:8000")}
	now := time.Unix(1_800_000_000, 0)
	tg.resolve(proc, now) // the look among the processes learns the descriptor too
	if tg.pid != 5000 || tg.sock.FD != "3" || proc.tables != 2 {
		t.Fatalf("owner %d at fd %q after %d reads of the socket tables, want 5000 at 3 after one of each (net/tcp, net/tcp6)", tg.pid, tg.sock.FD, proc.tables)
	}
	proc.tables, proc.cmdlines = 0, 0
	for i := 1; i <= 10; i++ { // five minutes of rechecks, the first one's included
		now = now.Add(ownerEvery)
		tg.resolve(proc, now)
	}
	if tg.pid != 5000 || proc.tables != 0 {
		t.Fatalf("owner %d after %d reads of the socket tables in 10 rechecks, want 5000 and none", tg.pid, proc.tables)
	}
	// the socket closed and opened again at another descriptor
	delete(proc.MapFS, "5000/fd/3")
	proc.MapFS["5000/fd/9"] = &fstest.MapFile{Data: []byte("socket:[222]"), Mode: fs.ModeSymlink}
	now = now.Add(ownerEvery)
	tg.resolve(proc, now)
	if tg.pid != 5000 || tg.sock.FD != "9" || proc.cmdlines != 0 {
		t.Fatalf("owner %d at fd %q after the socket moved (%d command lines read), want 5000 at 9 without a look among the processes", tg.pid, tg.sock.FD, proc.cmdlines)
	}
	// the socket closed for good: the next recheck looks among the processes
	delete(proc.MapFS, "5000/fd/9")
	now = now.Add(ownerEvery)
	tg.resolve(proc, now)
	if tg.pid != 0 {
		t.Fatalf("owner %d after the socket closed, want none", tg.pid)
	}
}

// Whether llmtop runs in a container's PID namespace is read once, not at
// every look (its self/status read was 1 % of the monitor's profile).
func TestHostNestedNoteReadOnce(t *testing.T) {
	proc := &countingFS{MapFS: fstest.MapFS{
		"self/status":  {Data: []byte("Name:\tllmtop\nNSpid:\t4242\t7\n")},
		"stat":         {Data: []byte("cpu  1 2 3\nbtime 1799999000\n")},
		"5000/cmdline": {Data: []byte("/opt/llama-server\x00--port\x008000\x00")},
		"5000/stat":    {Data: []byte("5000 (llama-server) S 1 5000 5000 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99000 1 1")},
	}}
	h := newHostLooks([]string{"http://127.0.0.1:8000"}, nil, host.Config{Proc: proc}, proc)
	if h == nil || !strings.Contains(h.nested, "container's PID namespace") {
		t.Fatalf("nested note %q, want the container's", h.nested)
	}
	delete(proc.MapFS, "self/status") // a second read would now say nothing
	now := time.Unix(1_800_000_000, 0)
	readings := 0
	for i := range 3 {
		for _, m := range h.read(now.Add(time.Duration(i) * hostEvery)) {
			if r, ok := m.(model.HostReading); ok {
				readings++
				if !strings.Contains(r.Note, "container's PID namespace") {
					t.Fatalf("look %d: note %q, want the container's", i, r.Note)
				}
			}
		}
	}
	if readings != 3 {
		t.Fatalf("%d readings in 3 looks, want 3", readings)
	}
}
