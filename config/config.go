package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Config is the optional user config ($XDG_CONFIG_HOME/llmtop/config.toml),
// a small TOML subset:
//
//	theme = "auto"            # auto, dark, light, mono
//	no_color = false
//	endpoints = ["http://127.0.0.1:8000", "http://10.0.0.7:30000"]
//	interval = "1s"
//	window = "5m"
//
//	[thresholds]
//	ttft_p99_ms = 200
//	itl_p99_ms = 50
//	kv_warn_pct = 85
//	kv_crit_pct = 95
//	waiting_max = 0
//	gpu_temp_c = 83
//	gpu_mem_pct = 98
//	gpu_idle_pct = 30
//
//	[keys]
//	quit = ["q", "ctrl+c"]
//	logs = "L"
//
//	mouse = true              # false leaves the mouse to the terminal (its own selection)
//
//	[panes]
//	order = ["diagnosis", "latency"]  # these first, then the others
//	hide = ["throughput"]
//	log = true                # the engine log as a pane of the grid
//
//	record = true             # record every monitor session (docs/recording.md)
//	[record]
//	file_mb = 100             # a new file past this size
//	keep_mb = 1000            # the oldest recordings go past this total
//	keep_days = 7             # and past this age
type Config struct {
	Theme      string
	NoColor    bool
	Endpoints  []string
	Interval   time.Duration
	Window     time.Duration
	Thresholds Thresholds
	// Rebinds are the [keys] section in file order: an action and its
	// keys (the screen applies them: tui.ParseConfig).
	Rebinds []Rebind
	Record  RecordConfig
	Panes   PaneConfig
	NoMouse bool
}

// Rebind is one [keys] line.
type Rebind struct {
	Action string
	Keys   []string
}

// Checker is what the screen knows of the config: its panes and its key
// actions. Nil checks nothing of [keys] and [panes] (a headless face).
type Checker interface {
	// PaneIDs are the panes [panes] may name.
	PaneIDs() []string
	// Rebind applies one [keys] line, or says what is wrong with it.
	Rebind(action string, keys []string) error
	// Done says what is wrong with the keys as a whole (two actions on
	// one key), once the file is read.
	Done() error
}

// Default is the config without a file.
func Default() Config {
	return Config{Theme: "auto", Thresholds: DefaultThresholds, Record: DefaultRecordConfig}
}

// Parse reads a config file's bytes; name is used in errors, which read
// "name:line: what is wrong". check, when set, validates [keys] and
// [panes] as the screen will use them.
func Parse(name string, data []byte, check Checker) (Config, error) {
	c := Default()
	section := ""
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(stripComment(raw))
		if line == "" {
			continue
		}
		fail := func(format string, a ...any) error {
			// The message quotes the file's text: cleaned, so a config
			// line cannot put escape sequences on the terminal.
			return fmt.Errorf("%s:%d: %s", model.Clean(name), i+1, model.Clean(fmt.Sprintf(format, a...)))
		}
		if strings.HasPrefix(line, "[") {
			if !strings.HasSuffix(line, "]") {
				return c, fail("section header %q is missing its ]", line)
			}
			section = strings.TrimSpace(line[1 : len(line)-1])
			if section != "thresholds" && section != "keys" && section != "record" && section != "panes" {
				return c, fail("unknown section [%s] (known: [thresholds], [keys], [record], [panes])", section)
			}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return c, fail("expected key = value, got %q", line)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		var err error
		switch section {
		case "":
			err = c.setTop(k, v)
		case "thresholds":
			err = c.setThreshold(k, v)
		case "record":
			err = c.Record.set(k, v)
		case "panes":
			err = c.Panes.set(k, v, check)
		case "keys":
			var keys []string
			if keys, err = parseList(v); err == nil {
				c.Rebinds = append(c.Rebinds, Rebind{Action: k, Keys: keys})
				if check != nil {
					err = check.Rebind(k, keys)
				}
			}
		}
		if err != nil {
			return c, fail("%v", err)
		}
	}
	if check != nil {
		if err := check.Done(); err != nil {
			return c, fmt.Errorf("%s: [keys]: %v", model.Clean(name), err)
		}
	}
	return c, nil
}

// stripComment drops a # comment that is not inside a quoted string.
func stripComment(s string) string {
	in := false
	for i, r := range s {
		switch {
		case r == '"':
			in = !in
		case r == '#' && !in:
			return s[:i]
		}
	}
	return s
}

func (c *Config) setTop(k, v string) error {
	switch k {
	case "theme":
		s, err := parseString(v)
		if err != nil {
			return err
		}
		switch s {
		case "auto", "dark", "light", "mono":
			c.Theme = s
		default:
			return fmt.Errorf("theme %q: use auto, dark, light or mono", s)
		}
	case "no_color":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("no_color: want true or false, got %s", v)
		}
		c.NoColor = b
	case "endpoints":
		l, err := parseList(v)
		if err != nil {
			return err
		}
		for _, u := range l {
			if u == "" || model.Unsafe(u) || strings.ContainsAny(u, " \t") {
				return fmt.Errorf("endpoints: %s is not a URL", strconv.QuoteToASCII(u))
			}
		}
		c.Endpoints = l
	case "interval", "window":
		s, err := parseString(v)
		if err != nil {
			return err
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return fmt.Errorf("%s: want a duration such as \"1s\" or \"5m\", got %s", k, v)
		}
		check, dst := CheckInterval, &c.Interval
		if k == "window" {
			check, dst = CheckWindow, &c.Window
		}
		if err := check(d); err != nil {
			return fmt.Errorf("%s = %s: %v", k, v, err)
		}
		*dst = d
	case "record":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("record: want true or false, got %s", v)
		}
		c.Record.Enabled = b
	case "mouse":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("mouse: want true or false, got %s", v)
		}
		c.NoMouse = !b
	default:
		return fmt.Errorf("unknown setting %q (known: theme, no_color, endpoints, interval, window, record, mouse; sections [thresholds], [keys], [record], [panes])", k)
	}
	return nil
}

// maxThreshold bounds every threshold (1e9 ms is 11 days).
const maxThreshold = 1e9

func (c *Config) setThreshold(k, v string) error {
	x, err := strconv.ParseFloat(v, 64)
	// NaN, +Inf, and numbers so large a duration wraps negative, are no
	// threshold (fuzzing found ttft_p99_ms = 1e300 turned into -2562047h).
	if err != nil || !(x >= 0 && x <= maxThreshold) {
		return fmt.Errorf("%s: want a number ≥ 0, got %s (at most 1e9)", k, v)
	}
	t := &c.Thresholds
	ms := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
	secs := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	switch k {
	case "ttft_p99_ms":
		t.TTFTp99 = ms(x)
	case "itl_p99_ms":
		t.ITLp99 = ms(x)
	case "kv_warn_pct":
		t.KVWarn = x / 100
	case "kv_crit_pct":
		t.KVCrit = x / 100
	case "waiting_max":
		t.WaitingMax = x
	case "gpu_temp_c":
		t.GPUTemp = x
	case "gpu_mem_pct":
		t.GPUMem = x / 100
	case "gpu_idle_pct":
		t.GPUIdle = x
	case "kv_crit_for_s":
		t.KVFor = secs(x)
	case "waiting_backlog":
		t.WaitingHigh = x
	case "waiting_backlog_for_s":
		t.WaitingFor = secs(x)
	case "preemptions_per_s":
		t.PreemptPS = x
	case "route_hold_s":
		t.RouteHold = secs(x)
	case "route_lag_s":
		t.RouteLag = secs(x)
	case "route_full_kv_pct":
		t.RouteFullKV = x / 100
	case "route_queue_min":
		t.RouteQueueMin = x
	case "kv_stall_pct":
		t.KVStallShare = x / 100
	case "route_dead_qps":
		t.RouteDeadQPS = x
	case "route_router_window_s":
		t.RouteRouterWindow = secs(x)
	case "route_router_queue_min":
		t.RouteRouterQueueMin = x
	case "route_overhead_pct":
		t.RouteOverheadShare = x / 100
	case "route_overhead_min_ms":
		t.RouteOverheadMin = ms(x)
	default:
		return fmt.Errorf("unknown threshold %q (known: ttft_p99_ms, itl_p99_ms, kv_warn_pct, kv_crit_pct, kv_crit_for_s, waiting_max, waiting_backlog, waiting_backlog_for_s, preemptions_per_s, gpu_temp_c, gpu_mem_pct, gpu_idle_pct, route_hold_s, route_lag_s, route_full_kv_pct, route_queue_min, kv_stall_pct, route_dead_qps, route_router_window_s, route_router_queue_min, route_overhead_pct, route_overhead_min_ms)", k)
	}
	return nil
}

// parseString reads "quoted" or bare text.
func parseString(v string) (string, error) {
	if strings.HasPrefix(v, `"`) {
		s, err := strconv.Unquote(v)
		if err != nil {
			return "", fmt.Errorf("bad string %s", v)
		}
		return s, nil
	}
	if v == "" {
		return "", fmt.Errorf("missing value")
	}
	return v, nil
}

// parseList reads ["a", "b"] or a single string.
func parseList(v string) ([]string, error) {
	if !strings.HasPrefix(v, "[") {
		s, err := parseString(v)
		if err != nil {
			return nil, err
		}
		return []string{s}, nil
	}
	if !strings.HasSuffix(v, "]") {
		return nil, fmt.Errorf("list %s is missing its ] (lists must be on one line)", v)
	}
	var out []string
	for _, item := range strings.Split(v[1:len(v)-1], ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		s, err := parseString(item)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
