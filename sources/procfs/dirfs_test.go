package procfs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Dir reads what os.DirFS reads, with its own ReadFile: short and long
// files whole, /proc's files (size 0 in stat), and the errors fs callers
// test for.
func TestDirReadsWhatDirFSReads(t *testing.T) {
	root := t.TempDir()
	long := bytes.Repeat([]byte("0123456789abcdef\n"), 1000) // 17 000 bytes: several reads
	if err := os.WriteFile(filepath.Join(root, "long"), long, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "empty"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("long", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	d := Dir(root)
	if _, ok := d.(fs.ReadFileFS); !ok {
		t.Fatal("Dir has no ReadFile of its own")
	}
	for _, name := range []string{"long", "empty", "link"} {
		got, err := fs.ReadFile(d, name)
		want, _ := os.ReadFile(filepath.Join(root, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v; want %d bytes", name, len(got), err, len(want))
		}
	}
	if _, err := fs.ReadFile(d, "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := fs.ReadFile(d, "../etc/passwd"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("a path out of the root: %v, want fs.ErrInvalid", err)
	}
	if target, err := fs.ReadLink(d, "link"); err != nil || target != "long" {
		t.Errorf("ReadLink = %q, %v", target, err)
	}
	if ents, err := fs.ReadDir(d, "."); err != nil || len(ents) != 3 {
		t.Errorf("ReadDir = %d entries, %v; want 3", len(ents), err)
	}
	if st, err := fs.Stat(d, "long"); err != nil || st.Size() != int64(len(long)) {
		t.Errorf("Stat = %v, %v", st, err)
	}
}

func TestDirReadsProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc here")
	}
	b, err := fs.ReadFile(FS(), "self/status")
	if err != nil || !strings.Contains(string(b), "\nPid:") {
		t.Fatalf("self/status: %q, %v", b, err)
	}
	if Nested(FS()) == -1 && strings.Contains(string(b), "NSpid:") {
		t.Error("Nested could not read self/status through FS")
	}
}
