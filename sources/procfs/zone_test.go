package procfs

import (
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"testing/fstest"
	"time"
)

// offsetAt is loc's offset from UTC on a summer and a winter day.
func offsetAt(loc *time.Location) (summer, winter int) {
	_, s := time.Date(2026, 7, 1, 12, 0, 0, 0, loc).Zone()
	_, w := time.Date(2026, 1, 1, 12, 0, 0, 0, loc).Zone()
	return s, w
}

// An engine's zone, as its C library reads it: its TZ, else its own
// root's /etc/localtime (a container's), else UTC; unknown when it
// cannot be read.
func TestZoneOfAProcess(t *testing.T) {
	ny, err := os.ReadFile("/usr/share/zoneinfo/America/New_York")
	if err != nil {
		t.Skip("no tzdata on this machine: ", err)
	}
	link := &fstest.MapFile{Data: []byte("/usr/share/zoneinfo/America/New_York"), Mode: fs.ModeSymlink}
	fsys := fstest.MapFS{
		// TZ set: a zone name, and one given as a file
		"10/environ": {Data: []byte("PATH=/bin\x00TZ=Asia/Kolkata\x00")},
		"11/environ": {Data: []byte("TZ=:/usr/share/zoneinfo/America/New_York\x00")},
		"11/root/usr/share/zoneinfo/America/New_York": {Data: ny},
		// no TZ: the container's /etc/localtime, a link read in its root
		"12/environ":            {Data: []byte("HOME=/root\x00")},
		"12/root/etc/localtime": link,
		"12/root/usr/share/zoneinfo/America/New_York": {Data: ny},
		// no TZ, no /etc/localtime (a slim container): UTC
		"13/environ":     {Data: []byte("HOME=/root\x00")},
		"13/root/bin/sh": {Data: []byte("x")},
		// a POSIX rule: not read
		"14/environ": {Data: []byte("TZ=CET-1CEST,M3.5.0,M10.5.0/3\x00")},
		// a copied /etc/localtime file
		"16/environ":            {Data: []byte("\x00")},
		"16/root/etc/localtime": {Data: ny},
	}
	for _, c := range []struct {
		pid            int
		ok             bool
		summer, winter int
	}{
		{10, true, 19800, 19800},
		{11, true, -4 * 3600, -5 * 3600},
		{12, true, -4 * 3600, -5 * 3600},
		{13, true, 0, 0},
		{14, false, 0, 0},
		{15, false, 0, 0}, // no environ readable (another user's process)
		{16, true, -4 * 3600, -5 * 3600},
	} {
		loc, name, ok := Zone(fsys, c.pid)
		if ok != c.ok {
			t.Errorf("pid %d: ok %v (%q), want %v", c.pid, ok, name, c.ok)
			continue
		}
		if !ok {
			continue
		}
		if s, w := offsetAt(loc); s != c.summer || w != c.winter {
			t.Errorf("pid %d (%s): offsets %d/%d, want %d/%d", c.pid, name, s, w, c.summer, c.winter)
		}
	}

	// a real process started with its own TZ, read through this /proc
	cmd := exec.Command("sleep", "5")
	cmd.Env = append(os.Environ(), "TZ=Asia/Tokyo")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// its environment reads empty until the exec has settled
	for i := 0; i < 200; i++ {
		if b, _ := fs.ReadFile(FS(), strconv.Itoa(cmd.Process.Pid)+"/environ"); len(b) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	loc, name, ok := Zone(FS(), cmd.Process.Pid)
	if !ok || name != "Asia/Tokyo" {
		t.Fatalf("a child with TZ=Asia/Tokyo: %v %q %v", loc, name, ok)
	}
	if s, _ := offsetAt(loc); s != 9*3600 {
		t.Errorf("Asia/Tokyo offset %d", s)
	}
}
