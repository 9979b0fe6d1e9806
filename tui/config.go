package tui

import (
	"fmt"

	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/diagnosis"
)

// Config is the user's config file (config.Config, which the headless
// faces read) with its [keys] applied to the screen's key map.
type Config struct {
	config.Config
	Keys KeyMap
}

// RecordConfig is the config's record settings (config.RecordConfig).
type RecordConfig = config.RecordConfig

// DefaultRecordConfig is config.DefaultRecordConfig.
var DefaultRecordConfig = config.DefaultRecordConfig

// DiagnosisConfig is config.DiagnosisConfig: the thresholds carried into
// the rules.
func DiagnosisConfig(t Thresholds) diagnosis.Config { return config.DiagnosisConfig(t) }

// DefaultConfig is the config without a file.
func DefaultConfig() Config {
	return Config{Config: config.Default(), Keys: DefaultKeyMap()}
}

// ParseConfig reads a config file's bytes (config.Parse) and checks its
// [keys] and [panes] against the screen's: errors read "name:line: what is
// wrong".
func ParseConfig(name string, data []byte) (Config, error) {
	ch := &configChecker{keys: DefaultKeyMap()}
	c, err := config.Parse(name, data, ch)
	return Config{Config: c, Keys: ch.keys}, err
}

// configChecker is the screen's side of config.Checker.
type configChecker struct{ keys KeyMap }

func (*configChecker) PaneIDs() []string { return paneIDs() }

func (c *configChecker) Rebind(action string, keys []string) error {
	return c.keys.Rebind(action, keys)
}

// Done: two actions on one screen under one key: one of them could never
// be reached (a replay's own keys are checked by `llmtop replay`).
func (c *configChecker) Done() error {
	for _, cl := range c.keys.Clashes() {
		if !cl.Replay {
			return fmt.Errorf("%v: rebind one of them", cl)
		}
	}
	return nil
}
