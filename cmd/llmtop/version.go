package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// `llmtop version` and `--version`: what this build is. `make dist` stamps
// the version, commit, date and glibc floor with -ldflags -X; a plain `go
// build` or `go install …@vX` fills what it can from the build info Go
// embeds (module version, VCS revision and time, cgo).

var (
	commit     = "" // -X main.commit=…
	buildDate  = "" // -X main.buildDate=… (the commit's date: builds are reproducible)
	glibcFloor = "" // -X main.glibcFloor=2.17: the oldest glibc the release build starts on
)

// buildDetails is `llmtop version --json`.
type buildDetails struct {
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	Date       string `json:"date,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
	NVML       bool   `json:"nvml"`
	NVMLNote   string `json:"nvml_note"`
	GlibcFloor string `json:"glibc_floor,omitempty"`
}

func init() {
	b := readBuild(debug.ReadBuildInfo())
	version = b.Version
	root.Version = b.oneLine()
	root.SetVersionTemplate("llmtop {{.Version}}\n")

	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the build's version, commit, date, platform and whether it reads NVML",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return b.write(cmd.OutOrStdout(), asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	root.AddCommand(cmd)
}

// readBuild combines the stamped variables with Go's build info; the
// stamps win where both exist.
func readBuild(bi *debug.BuildInfo, ok bool) buildDetails {
	b := buildDetails{Version: version, Commit: commit, Date: buildDate, GlibcFloor: glibcFloor,
		Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	cgo := false
	if ok {
		if b.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version // go install …@v1.2.3
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.time":
				if b.Date == "" {
					b.Date = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true"
			case "CGO_ENABLED":
				cgo = s.Value == "1"
			}
		}
	}
	b.NVML, b.NVMLNote = nvmlSupport(cgo, runtime.GOOS)
	return b
}

// nvmlSupport says whether this build can read NVML, and why not.
func nvmlSupport(cgo bool, goos string) (bool, string) {
	switch {
	case goos != "linux":
		return false, "no NVML on " + goos + ": read a Linux box's GPUs from its DCGM exporter with --dcgm URL"
	case !cgo:
		return false, "built without cgo (no C compiler at build time): no GPU rows; rebuild with gcc installed, or use --dcgm URL"
	}
	return true, "loads libnvidia-ml.so.1 at run time; starts without it"
}

func (b buildDetails) oneLine() string {
	var extra []string
	if b.Commit != "" {
		c := b.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if b.Modified {
			c += "+dirty"
		}
		extra = append(extra, "commit "+c)
	}
	if b.Date != "" {
		extra = append(extra, "built "+b.Date)
	}
	extra = append(extra, b.Platform)
	if !b.NVML {
		extra = append(extra, "no NVML")
	}
	return b.Version + " (" + strings.Join(extra, ", ") + ")"
}

func (b buildDetails) write(w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(b)
	}
	orUnknown := func(s string) string {
		if s == "" {
			return "unknown (not stamped: build with make dist)"
		}
		return s
	}
	nvml := "no: " + b.NVMLNote
	if b.NVML {
		nvml = "yes: " + b.NVMLNote
	}
	c := orUnknown(b.Commit)
	if b.Modified {
		c += " (with uncommitted changes)"
	}
	fmt.Fprintf(w, "llmtop %s\n  commit    %s\n  date      %s\n  go        %s\n  platform  %s\n  NVML      %s\n",
		b.Version, c, orUnknown(b.Date), b.Go, b.Platform, nvml)
	if b.GlibcFloor != "" {
		fmt.Fprintf(w, "  glibc     %s or newer\n", b.GlibcFloor)
	}
	return nil
}
