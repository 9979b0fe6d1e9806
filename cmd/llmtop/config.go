package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/llmtop/llmtop/tui"
)

// loadConfig reads the optional config file: the --config path, or
// $XDG_CONFIG_HOME/llmtop/config.toml (~/.config when XDG_CONFIG_HOME is
// unset). A missing default file is fine; a missing --config file, or a
// wrong line in either, is an error naming the file and line.
func loadConfig(path string) (tui.Config, error) {
	explicit := path != ""
	if !explicit {
		path = defaultConfigPath()
	}
	if path == "" {
		return tui.DefaultConfig(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return tui.DefaultConfig(), nil
		}
		return tui.Config{}, err
	}
	return tui.ParseConfig(path, data)
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
