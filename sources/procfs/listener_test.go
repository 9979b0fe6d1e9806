package procfs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// fieldsListeners is eachListener as it was: a string per field of every
// line (the oracle the streamed read is held to).
func fieldsListeners(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) < 10 || fl[3] != "0A" {
			continue
		}
		if addr, p, ok := strings.Cut(fl[1], ":"); ok {
			out = append(out, addr+" "+p+" "+fl[9])
		}
	}
	return out
}

func listeners(fsys fstest.MapFS) []string {
	var out []string
	eachListener(fsys, func(addr, port, inode string) { out = append(out, addr+" "+port+" "+inode) })
	return out
}

// A busy machine's socket table (thousands of connections, a few
// listening): the same listeners as a read of every field of every line,
// in this machine's own tables too, for a small part of the garbage.
func TestListenersStreamedAsReadByFields(t *testing.T) {
	var tcp strings.Builder
	tcp.WriteString("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n")
	for i := range 4000 {
		st := "06" // TIME_WAIT
		if i%500 == 7 {
			st = "0A"
		}
		fmt.Fprintf(&tcp, "%4d: 0100007F:%04X 0100007F:%04X %s 00000000:00000000 03:00000B2F 00000000     0        0 %d 1 0000000000000000 20 4 30 10 -1\n", i, 30000+i, 8000+i%7, st, 100000+i)
	}
	tcp6 := "  sl  local_address rem_address st tx_queue rx_queue tr tm->when retrnsmt uid timeout inode\n" +
		"   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 1000 0 222 1\n" +
		"   1: 00000000000000000000000000000000:1F91\t00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 1000 0 223 1" // tabs, no newline
	fsys := fstest.MapFS{"net/tcp": {Data: []byte(tcp.String())}, "net/tcp6": {Data: []byte(tcp6)}}
	want := append(fieldsListeners([]byte(tcp.String())), fieldsListeners([]byte(tcp6))...)
	if got := listeners(fsys); !slices.Equal(got, want) || len(got) != 10 {
		t.Fatalf("streamed %d listeners %q, by fields %d %q", len(got), got, len(want), want)
	}
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	listeners(fsys)
	runtime.ReadMemStats(&b)
	if n := b.TotalAlloc - a.TotalAlloc; n > 128<<10 {
		t.Errorf("a read of a 4000-line table allocated %d bytes, want under 128 kB", n)
	}
	// this machine's tables, as they are now
	real := fstest.MapFS{}
	want = nil
	for _, name := range []string{"net/tcp", "net/tcp6"} {
		if b, err := os.ReadFile("/proc/" + name); err == nil {
			real[name] = &fstest.MapFile{Data: b}
			want = append(want, fieldsListeners(b)...)
		}
	}
	if got := listeners(real); !slices.Equal(got, want) {
		t.Errorf("this machine's tables: streamed %q, by fields %q", got, want)
	}
}
