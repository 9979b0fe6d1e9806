package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

// The stamps from make dist win over Go's build info; a `go install
// …@v1.2.3` build (no stamps) takes the module version and VCS details.
func TestReadBuildStampsAndBuildInfo(t *testing.T) {
	saved := [4]string{version, commit, buildDate, glibcFloor}
	defer func() { version, commit, buildDate, glibcFloor = saved[0], saved[1], saved[2], saved[3] }()

	bi := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-01T10:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
		{Key: "CGO_ENABLED", Value: "0"},
	}}
	version, commit, buildDate, glibcFloor = "dev", "", "", ""
	b := readBuild(bi, true)
	if b.Version != "v1.2.3" || b.Commit != "0123456789abcdef0123456789abcdef01234567" || b.Date != "2026-11-01T10:00:00Z" || !b.Modified {
		t.Errorf("from build info: %+v", b)
	}
	if b.NVML || !strings.Contains(b.NVMLNote, "without cgo") && !strings.Contains(b.NVMLNote, "no NVML on") {
		t.Errorf("a build without cgo claims NVML: %+v", b)
	}
	if got := b.oneLine(); !strings.HasPrefix(got, "v1.2.3 (commit 0123456789ab+dirty, built 2026-11-01T10:00:00Z, ") || !strings.HasSuffix(got, "no NVML)") {
		t.Errorf("oneLine = %q", got)
	}

	version, commit, buildDate, glibcFloor = "v2.0.0", "fedcba9876543210fedcba9876543210fedcba98", "2026-11-20T00:00:00Z", "2.17"
	bi.Settings[3].Value = "1"
	b = readBuild(bi, true)
	if b.Version != "v2.0.0" || b.Commit != "fedcba9876543210fedcba9876543210fedcba98" || b.Date != "2026-11-20T00:00:00Z" || b.GlibcFloor != "2.17" {
		t.Errorf("stamps lost to build info: %+v", b)
	}
	var out bytes.Buffer
	if err := b.write(&out, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"llmtop v2.0.0\n", "commit    fedcba98", "(with uncommitted changes)", "glibc     2.17 or newer"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("version output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := b.write(&out, true); err != nil {
		t.Fatal(err)
	}
	var back buildDetails
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back != b {
		t.Errorf("--json round trip: %v\n%s", err, out.String())
	}

	// No build info at all (a binary stripped of it): still a version.
	version, commit, buildDate = "dev", "", ""
	b = readBuild(nil, false)
	out.Reset()
	_ = b.write(&out, false)
	if b.Version != "dev" || !strings.Contains(out.String(), "commit    unknown (not stamped") {
		t.Errorf("without build info: %+v\n%s", b, out.String())
	}
}

func TestNVMLSupportSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		cgo  bool
		goos string
		ok   bool
		want string
	}{
		{true, "linux", true, "libnvidia-ml.so.1"},
		{false, "linux", false, "without cgo"},
		{false, "darwin", false, "no NVML on darwin"},
		{true, "darwin", false, "--dcgm"},
	} {
		ok, note := nvmlSupport(tc.cgo, tc.goos)
		if ok != tc.ok || !strings.Contains(note, tc.want) {
			t.Errorf("nvmlSupport(%v, %s) = %v, %q; want %v and %q", tc.cgo, tc.goos, ok, note, tc.ok, tc.want)
		}
	}
}

// The man page is valid roff that man renders (when man is installed), and
// lists every visible subcommand and the root's flags.
func TestManPage(t *testing.T) {
	var out bytes.Buffer
	if err := writeMan(&out, root); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	if !strings.HasPrefix(page, ".TH LLMTOP 1 ") {
		t.Fatalf("no .TH header:\n%.200s", page)
	}
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() && c.Name() != "help" && !strings.Contains(page, `.SS "llmtop `+roffText(c.Name())) {
			t.Errorf("man page lacks the %s command", c.Name())
		}
	}
	for _, want := range []string{`\fB\-\-dcgm\fR`, `.SS "llmtop completion bash"`, `.SS "llmtop version"`, "libnvidia\\-ml.so.1"} {
		if !strings.Contains(page, want) {
			t.Errorf("man page lacks %q", want)
		}
	}
	for i, line := range strings.Split(page, "\n") {
		// a line of text starting with a dot or quote would be read as a request
		if (strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'")) && !isRoffRequest(line) {
			t.Errorf("line %d starts like a roff request: %q", i+1, line)
		}
	}
	man, err := exec.LookPath("man")
	if err != nil {
		t.Log("man not installed: rendering not checked")
		return
	}
	cmd := exec.Command(man, "--warnings", "-l", "-")
	cmd.Stdin = strings.NewReader(page)
	cmd.Env = []string{"MANWIDTH=80", "PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	rendered, err := cmd.Output()
	if err != nil {
		t.Fatalf("man -l: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(string(rendered), "llmtop snapshot") || strings.Contains(stderr.String(), "warning") {
		t.Errorf("man rendered %d bytes; warnings:\n%s", len(rendered), stderr.String())
	}
}

func isRoffRequest(line string) bool {
	for _, r := range []string{".TH ", ".SH ", ".SS ", ".B ", ".PP", ".TP", ".br", ".nf", ".fi", ".ad l"} {
		if strings.HasPrefix(line, r) {
			return true
		}
	}
	return false
}

func TestRoffText(t *testing.T) {
	for in, want := range map[string]string{
		`--port`:         `\-\-port`,
		`C:\path`:        `C:\epath`,
		`.hidden`:        `\&.hidden`,
		`'quoted' text`:  `\&'quoted' text`,
		"plain words 1.": "plain words 1.",
	} {
		if got := roffText(in); got != want {
			t.Errorf("roffText(%q) = %q, want %q", in, got, want)
		}
	}
}
