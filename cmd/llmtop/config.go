package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/tui"
)

// loadConfig reads the optional config file: the --config path, or
// $XDG_CONFIG_HOME/llmtop/config.toml (~/.config when XDG_CONFIG_HOME is
// unset). A missing default file is fine; a missing --config file, or a
// wrong line in either, is an error naming the file and line.
func loadConfig(path string) (tui.Config, error) {
	c, err := readConfig(path)
	if err != nil {
		return c, err
	}
	return c, applySLOFlags(&c.Thresholds)
}

// applySLOFlags lets --slo-ttft / --slo-tpot, when given, win over the
// file's [thresholds]: the screen's judgements and the diagnosis rules read
// the same numbers in the monitor and in `llmtop diagnose`.
func applySLOFlags(t *config.Thresholds) error {
	for _, f := range []struct {
		name string
		v    time.Duration
		dst  *time.Duration
	}{{"slo-ttft", monitorFlags.sloTTFT, &t.TTFTp99}, {"slo-tpot", monitorFlags.sloTPOT, &t.ITLp99}} {
		if !flagSet(f.name) {
			continue
		}
		if f.v <= 0 {
			return usageErr("--%s %v: want a positive duration, e.g. 200ms", f.name, f.v)
		}
		*f.dst = f.v
	}
	return nil
}

func readConfig(path string) (tui.Config, error) {
	explicit := path != ""
	if !explicit {
		path = defaultConfigPath()
	}
	if path == "" {
		return tui.DefaultConfig(), nil
	}
	// A config is a file: a FIFO would block start-up until something
	// wrote to it, a device never end. Its errors are the person's to fix
	// (exit status 64, like a bad flag).
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return tui.Config{}, usageErr("--config %s: not a regular file (%s)", model.Clean(path), fileKind(st.Mode()))
	}
	data, err := readLimited(path, maxConfigBytes)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return tui.DefaultConfig(), nil
		}
		return tui.Config{}, &exitError{code: exitUsage, err: err}
	}
	c, err := tui.ParseConfig(path, data)
	if err != nil {
		return c, &exitError{code: exitUsage, err: err}
	}
	return c, nil
}

// fileKind names what a path is when it is not a regular file.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a file"
}

func defaultConfigPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "llmtop", "config.toml")
}

// maxConfigBytes bounds the config file: a real one is a few hundred bytes,
// and --config /dev/zero must not read until memory runs out.
const maxConfigBytes = 1 << 20

// readLimited reads at most limit bytes of path; a longer file is an error
// that says so (nothing of it is used).
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d KiB, which no llmtop config is: is it the right file?", path, limit>>10)
	}
	return data, nil
}
