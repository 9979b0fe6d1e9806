package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

func TestParseConfig(t *testing.T) {
	src := `# llmtop config
theme = "light"
endpoints = ["http://a:8000", "b:30000"]   # two servers
interval = "2s"
window = 5m

[thresholds]
ttft_p99_ms = 500
kv_crit_pct = 90
waiting_max = 4

[keys]
logs = ["L"]
quit = "Q"
`
	c, err := ParseConfig("config.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if c.Theme != "light" || c.Interval != 2*time.Second || c.Window != 5*time.Minute {
		t.Fatalf("top level: %+v", c)
	}
	if len(c.Endpoints) != 2 || c.Endpoints[1] != "b:30000" {
		t.Fatalf("endpoints %q", c.Endpoints)
	}
	if c.Thresholds.TTFTp99 != 500*time.Millisecond || c.Thresholds.KVCrit != 0.9 || c.Thresholds.WaitingMax != 4 {
		t.Fatalf("thresholds %+v", c.Thresholds)
	}
	if c.Thresholds.ITLp99 != DefaultThresholds.ITLp99 {
		t.Fatal("an unset threshold lost its default")
	}
	if !key.Matches(press("L"), c.Keys.Logs) || key.Matches(press("l"), c.Keys.Logs) {
		t.Fatal("logs not rebound to L")
	}
	if !key.Matches(press("Q"), c.Keys.Quit) || c.Keys.Quit.Help().Desc != "quit" {
		t.Fatal("quit not rebound to Q with its help text kept")
	}
}

func TestParseConfigErrorsNameFileAndLine(t *testing.T) {
	cases := []struct{ src, want string }{
		{"theme = \"neon\"", "cfg.toml:1: theme \"neon\": use auto, dark, light or mono"},
		{"\n\ncolour = 1", "cfg.toml:3: unknown setting \"colour\""},
		{"[thresholds]\nttft_p99_ms = fast", "cfg.toml:2: ttft_p99_ms: want a number ≥ 0, got fast"},
		{"[thresholds]\nkv = 1", "cfg.toml:2: unknown threshold \"kv\""},
		{"[colors]", "cfg.toml:1: unknown section [colors]"},
		{"[keys\n", "cfg.toml:1: section header \"[keys\" is missing its ]"},
		{"interval = soon", "cfg.toml:1: interval: want a duration"},
		{"\nwindow = \"10m\"", "cfg.toml:2: window = \"10m\": want 1m, 5m or 15m (the windows [ and ] step through)"},
		{"window = 1h", "cfg.toml:1: window = 1h: want 1m, 5m or 15m"},
		{"interval = \"100ms\"", "cfg.toml:1: interval = \"100ms\": want 250ms to 1m"},
		{"interval = \"2m\"", "cfg.toml:1: interval = \"2m\": want 250ms to 1m"},
		{"endpoints = [\"a\",", "cfg.toml:1: list [\"a\", is missing its ]"},
		{"just words", "cfg.toml:1: expected key = value"},
		{"[keys]\nexplode = \"x\"", "cfg.toml:2: unknown key action \"explode\""},
		{"no_color = maybe", "cfg.toml:1: no_color: want true or false"},
	}
	for _, c := range cases {
		_, err := ParseConfig("cfg.toml", []byte(c.src))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want prefix %q", c.src, err, c.want)
		}
	}
}

func TestConfigKeysReachTheModel(t *testing.T) {
	c, err := ParseConfig("c", []byte("[keys]\nlogs = \"L\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Endpoints: []string{testURL}, Now: t0, NoColor: true, Keys: &c.Keys})
	m.Update(press("L"))
	if m.overlay < 0 || m.overlays[m.overlay].id != "logs" {
		t.Fatal("L did not open the log view")
	}
}

func TestJudge(t *testing.T) {
	th := DefaultThresholds
	cases := []struct {
		name string
		m    Metric
		v    model.Opt
		ctx  []float64
		want Level
	}{
		{"missing has no level", MTTFT, model.None, nil, LevelNone},
		{"TTFT at SLO", MTTFT, model.Some(0.2), nil, LevelOK},
		{"TTFT over SLO", MTTFT, model.Some(0.25), nil, LevelWarn},
		{"TTFT over twice SLO", MTTFT, model.Some(0.5), nil, LevelCrit},
		{"ITL 40ms", MITL, model.Some(0.04), nil, LevelOK},
		{"ITL 60ms", MITL, model.Some(0.06), nil, LevelWarn},
		{"KV 50%", MKV, model.Some(0.5), nil, LevelOK},
		{"KV 90%", MKV, model.Some(0.9), nil, LevelWarn},
		{"KV 97%", MKV, model.Some(0.97), nil, LevelCrit},
		{"no one waits", MWaiting, model.Some(0), nil, LevelOK},
		{"some wait", MWaiting, model.Some(3), nil, LevelWarn},
		{"preemptions", MPreempt, model.Some(0.1), nil, LevelCrit},
		{"busy GPU is healthy", MGPUUtil, model.Some(99), []float64{5}, LevelOK},
		{"idle GPU, nobody waits", MGPUUtil, model.Some(5), []float64{0}, LevelOK},
		{"idle GPU while requests wait", MGPUUtil, model.Some(5), []float64{5}, LevelWarn},
		{"hot GPU", MGPUTemp, model.Some(85), nil, LevelWarn},
		{"very hot GPU", MGPUTemp, model.Some(95), nil, LevelCrit},
	}
	for _, c := range cases {
		if got := judgeLevel(th, c.m, c.v, c.ctx...); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFormat(t *testing.T) {
	cases := []struct{ got, want string }{
		{fmtSec(model.None), "--"},
		{fmtSec(model.Some(0.0004)), "400µs"},
		{fmtSec(model.Some(0.0123)), "12.3ms"},
		{fmtSec(model.Some(0.25)), "250ms"},
		{fmtSec(model.Some(1.234)), "1.23s"},
		{fmtSec(model.Some(125)), "2m05s"},
		{fmtNum(model.Some(12345)), "12.3k"},
		{fmtNum(model.Some(3)), "3"},
		{fmtNum(model.Some(0.5)), "0.50"},
		{fmtPct(model.Some(0.97)), "97%"},
		{fmtPct(model.Some(0.043)), "4.3%"},
		{fmtPct(model.None), "--"},
		{fmtBytes(model.Some(80 * (1 << 30))), "80.0Gi"},
		{memPair(model.Some(71.5*(1<<30)), model.Some(80*(1<<30))), "71.5/80.0Gi"},
		{fmtDur(90 * time.Second), "1m30s"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestSparklineGapsAndScale(t *testing.T) {
	pts := []model.Point{{V: 0, OK: true}, {OK: false}, {V: 10, OK: true}}
	if got := sparkline(pts, 5, 0); got != "  ▁ █" {
		t.Fatalf("%q", got)
	}
	// a ceiling keeps a small flat line low
	if got := sparkline([]model.Point{{V: 1, OK: true}}, 1, 8); got != "▁" {
		t.Fatalf("%q", got)
	}
}

// The diagnosis' alert-rule thresholds come from [thresholds] too; unset
// ones keep the diagnosis defaults.
func TestConfigThresholdsReachTheDiagnosis(t *testing.T) {
	c, err := ParseConfig("cfg.toml", []byte("[thresholds]\nkv_crit_pct = 90\nkv_crit_for_s = 120\nwaiting_backlog = 10\nwaiting_backlog_for_s = 30\npreemptions_per_s = 0.5\nttft_p99_ms = 400\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := DiagnosisConfig(c.Thresholds)
	if d.KVHigh != 0.9 || d.KVFor != 2*time.Minute || d.WaitingHigh != 10 || d.WaitingFor != 30*time.Second ||
		d.PreemptPS != 0.5 || d.SLOTTFT != 400*time.Millisecond {
		t.Fatalf("%+v", d)
	}
	def, dd := DiagnosisConfig(DefaultConfig().Thresholds), diagnosis.DefaultConfig()
	if def.KVFor != dd.KVFor || def.WaitingHigh != dd.WaitingHigh || def.WaitingFor != dd.WaitingFor || def.PreemptPS != dd.PreemptPS {
		t.Fatalf("defaults moved: %+v", def)
	}
}

func TestParseRecordConfig(t *testing.T) {
	c, err := ParseConfig("c.toml", []byte("record = true\n[record]\nfile_mb = 5\nkeep_mb = 50\nkeep_days = 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Record; !r.Enabled || r.FileBytes != 5<<20 || r.KeepBytes != 50<<20 || r.KeepAge != 48*time.Hour {
		t.Fatalf("%+v", r)
	}
	if c, _ := ParseConfig("c.toml", nil); c.Record != DefaultRecordConfig || c.Record.Enabled {
		t.Fatalf("default %+v", c.Record)
	}
	for in, want := range map[string]string{
		"record = yes\n":             "c.toml:1: record: want true or false",
		"[record]\nkeep_days = -1\n": "c.toml:2: keep_days: want a number > 0",
		"[record]\nrotate = daily\n": "c.toml:2: unknown setting \"rotate\" in [record]",
	} {
		if _, err := ParseConfig("c.toml", []byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// A config's key names are drawn in the footer and the help: an escape
// sequence (which retitled the tmux pane) or an empty name (after which
// neither q nor ctrl+c quit) is refused; ctrl+c always quits.
func TestConfigKeyNamesAreChecked(t *testing.T) {
	for _, bad := range []string{"[keys]\nquit = [\"\\u001b]0;pwned\\u0007\"]\n", "[keys]\nquit = [\"\"]\n", "[keys]\nhelp = [\"a\\tb\"]\n"} {
		if _, err := ParseConfig("c.toml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "key") {
			t.Errorf("%q accepted (%v)", bad, err)
		}
	}
	c, err := ParseConfig("c.toml", []byte("[keys]\nquit = [\"Q\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Keys.Quit.Keys(); !slices.Equal(got, []string{"Q", "ctrl+c"}) {
		t.Errorf("quit = %v, want Q and ctrl+c", got)
	}
}

// Issue 26: the routing rules' thresholds come from [thresholds] too.
func TestConfigRoutingThresholdsReachTheDiagnosis(t *testing.T) {
	c, err := ParseConfig("cfg.toml", []byte("[thresholds]\nroute_hold_s = 40\nroute_lag_s = 25\nroute_full_kv_pct = 85\nroute_queue_min = 20\nkv_stall_pct = 60\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := DiagnosisConfig(c.Thresholds)
	if d.RouteHold != 40*time.Second || d.RouteLag != 25*time.Second || d.RouteFullKV != 0.85 || d.RouteQueueMin != 20 || d.KVStallShare != 0.6 {
		t.Errorf("%+v", d)
	}
}
