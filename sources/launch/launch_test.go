package launch

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

func TestEndpointFromCommandLine(t *testing.T) {
	cases := []struct {
		args []string
		env  []string
		url  string
		eng  model.Engine
	}{
		{[]string{"vllm", "serve", "meta-llama/Llama-3.1-8B", "--max-num-seqs", "32"}, nil, "http://127.0.0.1:8000", model.VLLM},
		{[]string{"vllm", "serve", "m", "--port=8011", "--host", "0.0.0.0"}, nil, "http://127.0.0.1:8011", model.VLLM},
		{[]string{"/usr/bin/python3", "-m", "sglang.launch_server", "--model-path", "x"}, nil, "http://127.0.0.1:30000", model.SGLang},
		{[]string{"/opt/llama/llama-server", "-m", "model.gguf", "-np", "2", "--port", "9090"}, nil, "http://127.0.0.1:9090", model.LlamaCpp},
		{[]string{"ollama", "serve"}, []string{"OLLAMA_HOST=127.0.0.1:11500"}, "http://127.0.0.1:11500", model.Ollama},
		{[]string{"ollama", "serve"}, []string{"OLLAMA_HOST=0.0.0.0"}, "http://127.0.0.1:11434", model.Ollama},
		{[]string{"./bin/llmtop", "sim", "--scenario", "queue-buildup", "--max-num-seqs", "16", "--port", "18001"}, nil, "http://127.0.0.1:18001", model.VLLM},
		{[]string{"text-generation-launcher", "--model-id", "x"}, nil, "http://127.0.0.1:3000", model.TGI},
	}
	for _, c := range cases {
		u, eng, err := Endpoint(c.args, c.env)
		if err != nil || u != c.url || eng != c.eng {
			t.Errorf("Endpoint(%q) = %q, %q, %v; want %q, %q", c.args, u, eng, err, c.url, c.eng)
		}
	}
	if _, _, err := Endpoint([]string{"myserver", "--port", "1"}, nil); err == nil || !strings.Contains(err.Error(), "--url") {
		t.Errorf("an unknown program: %v, want an error naming --url", err)
	}
	if _, _, err := Endpoint([]string{"llama-server", "--port", "0"}, nil); err == nil {
		t.Error("--port 0: llmtop cannot know the port, want an error")
	}
}

func TestChangeApplied(t *testing.T) {
	sim := []string{"llmtop", "sim", "--scenario", "queue-buildup", "--max-num-seqs", "16"}
	llama := []string{"llama-server", "-m", "m.gguf", "--parallel", "2", "-c", "4096"}
	cases := []struct {
		args   []string
		change string
		want   []string
		diff   string
	}{
		{sim, "--max-num-seqs 32", []string{"llmtop", "sim", "--scenario", "queue-buildup", "--max-num-seqs", "32"}, "--max-num-seqs 16 → 32"},
		{[]string{"vllm", "serve", "m", "--max_num_seqs=16"}, "--max-num-seqs 32", []string{"vllm", "serve", "m", "--max_num_seqs=32"}, "--max-num-seqs 16 → 32"},
		{sim, "--gpu-memory-utilization 0.95", append(slices.Clone(sim), "--gpu-memory-utilization", "0.95"), "--gpu-memory-utilization (default) → 0.95"},
		{llama, "-np 4 -kvu (keep -c)", []string{"llama-server", "-m", "m.gguf", "--parallel", "4", "-c", "4096", "-kvu"}, "-np 2 → 4, -kvu (added)"},
		{[]string{"llmtop", "sim", "--no-enable-chunked-prefill"}, "--max-num-batched-tokens 2048 without --no-enable-chunked-prefill",
			[]string{"llmtop", "sim", "--max-num-batched-tokens", "2048"}, "--no-enable-chunked-prefill (removed), --max-num-batched-tokens (default) → 2048"},
		// the prefill-stall budget under vLLM's unexposed default cap
		// lowers the cap with it (diagnosis stepBudgetStall)
		{sim, "--max-num-batched-tokens 512 (with --max-num-seqs 512)", []string{"llmtop", "sim", "--scenario", "queue-buildup", "--max-num-seqs", "512", "--max-num-batched-tokens", "512"}, "--max-num-batched-tokens (default) → 512, --max-num-seqs 16 → 512"},
		{llama, "-ctk q8_0 -ctv q8_0 (with -fa on)", append(slices.Clone(llama), "-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on"), "-ctk (default) → q8_0, -ctv (default) → q8_0, -fa (default) → on"},
	}
	for _, c := range cases {
		ch, err := ParseChange(c.change)
		if err != nil {
			t.Errorf("ParseChange(%q): %v", c.change, err)
			continue
		}
		got, diff, err := Apply(c.args, ch)
		if err != nil || !slices.Equal(got, c.want) || Describe(diff) != c.diff {
			t.Errorf("Apply(%q, %q) = %q, %q, %v; want %q, %q", c.args, c.change, got, Describe(diff), err, c.want, c.diff)
		}
	}
}

func TestChangeNotApplicable(t *testing.T) {
	for change, why := range map[string]string{
		"OLLAMA_NUM_PARALLEL=N higher if KV usage and ITL leave room":           "value of OLLAMA_NUM_PARALLEL",
		"OLLAMA_HOST=0.0.0.0:11500":                                             "endpoint",
		"--data-parallel-size 2 (or another replica behind a router)":           "more hardware",
		"add a replica behind a router or load balancer":                        "needs a person",
		"--max-num-seqs N higher only once ITL/TPOT is seen under its SLO 50ms": "value",
		"kv_cache_config: {dtype: fp8} in the --config YAML":                    "needs a person",
		// every engine's parallelism flags, read from engines/
		"--tp_size 2": "more hardware", "--num-shard 2": "more hardware", "--dp-size 2": "more hardware", "-pp 2": "more hardware",
	} {
		_, err := ParseChange(change)
		var na *NotApplicable
		if !errors.As(err, &na) || !strings.Contains(na.Why, why) {
			t.Errorf("ParseChange(%q) = %v, want not applicable (%s)", change, err, why)
		}
	}
	ch, _ := ParseChange("--max-num-seqs 16")
	if _, _, err := Apply([]string{"llmtop", "sim", "--max-num-seqs", "16"}, ch); err == nil {
		t.Error("a change the command line already has: want an error")
	}
}

// An engine configured by its environment (Ollama) is changed there: the
// variable is set in place of its assignment, or added; its old value is
// the one llmtop launched it with, else the one it inherits.
func TestApplyEnv(t *testing.T) {
	inherited := func(name string) (string, bool) {
		if name == "OLLAMA_KEEP_ALIVE" {
			return "5m", true
		}
		return "", false
	}
	serve := []string{"ollama", "serve"}
	cases := []struct {
		env    []string
		change string
		want   []string
		diff   string
	}{
		{[]string{"OLLAMA_HOST=127.0.0.1:11500", "OLLAMA_NUM_PARALLEL=1"}, "OLLAMA_NUM_PARALLEL=2",
			[]string{"OLLAMA_HOST=127.0.0.1:11500", "OLLAMA_NUM_PARALLEL=2"}, "OLLAMA_NUM_PARALLEL 1 → 2"},
		{nil, "OLLAMA_NUM_PARALLEL=4", []string{"OLLAMA_NUM_PARALLEL=4"}, "OLLAMA_NUM_PARALLEL (default) → 4"},
		{nil, "OLLAMA_KEEP_ALIVE=-1 (or a longer keep_alive per request)", []string{"OLLAMA_KEEP_ALIVE=-1"}, "OLLAMA_KEEP_ALIVE 5m → -1"},
		{[]string{"OLLAMA_NUM_PARALLEL=4"}, "OLLAMA_CONTEXT_LENGTH=8192 (or num_ctx lower), OLLAMA_NUM_PARALLEL=1",
			[]string{"OLLAMA_NUM_PARALLEL=1", "OLLAMA_CONTEXT_LENGTH=8192"}, "OLLAMA_CONTEXT_LENGTH (default) → 8192, OLLAMA_NUM_PARALLEL 4 → 1"},
		{nil, "OLLAMA_KV_CACHE_TYPE=q8_0 (with OLLAMA_FLASH_ATTENTION=1)", []string{"OLLAMA_KV_CACHE_TYPE=q8_0", "OLLAMA_FLASH_ATTENTION=1"},
			"OLLAMA_KV_CACHE_TYPE (default) → q8_0, OLLAMA_FLASH_ATTENTION (default) → 1"},
	}
	for _, c := range cases {
		ch, err := ParseChange(c.change)
		if err != nil {
			t.Errorf("ParseChange(%q): %v", c.change, err)
			continue
		}
		env, args, diff, err := ApplyEnv(c.env, serve, ch, inherited)
		if err != nil || !slices.Equal(env, c.want) || !slices.Equal(args, serve) || Describe(diff) != c.diff {
			t.Errorf("ApplyEnv(%q, %q) = %q %q, %q, %v; want %q, %q", c.env, c.change, env, args, Describe(diff), err, c.want, c.diff)
		}
	}
	ch, _ := ParseChange("OLLAMA_NUM_PARALLEL=2")
	if _, _, _, err := ApplyEnv([]string{"OLLAMA_NUM_PARALLEL=2"}, serve, ch, inherited); err == nil {
		t.Error("an environment that already has it: want an error")
	}
}

// A session restarts an engine configured by its environment with the
// changed environment, and undo restores the one before.
func TestSessionRestartsWithTheChangedEnvironment(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "engine.log")
	script := filepath.Join(dir, "engine")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"parallel=$OLLAMA_NUM_PARALLEL\"\nwhile :; do sleep 0.1; done\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := NewSession([]string{script, "serve"}, []string{"OLLAMA_NUM_PARALLEL=1"}, log, "http://127.0.0.1:1", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The engine running at the end (the undo's), not the first one: Current is
	// read when the test ends (evaluated at the defer, it left the last
	// restart's engine running after every run of the test).
	defer func() { s.Current().Stop(time.Second) }()
	waitFor := func(line string, n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if b, _ := os.ReadFile(log); strings.Count(string(b), line) >= n {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		b, _ := os.ReadFile(log)
		t.Fatalf("the engine never printed %q (%d×): %q", line, n, b)
	}
	waitFor("parallel=1", 1)
	p := s.PlanFor("concurrency_cap", []string{"add a replica behind a router or load balancer", "OLLAMA_NUM_PARALLEL=2"})
	if !p.OK() || Describe(p.Diff) != "OLLAMA_NUM_PARALLEL 1 → 2" || p.NewCommand() != "OLLAMA_NUM_PARALLEL=2 "+script+" serve" {
		t.Fatalf("plan = %+v (%s)", p, p.NewCommand())
	}
	if _, _, err := s.Restart(p, func(string) {}); err != nil {
		t.Fatal(err)
	}
	waitFor("parallel=2", 1)
	if s.Command() != "OLLAMA_NUM_PARALLEL=2 "+script+" serve" {
		t.Errorf("the session's command is %q", s.Command())
	}
	u, ok := s.PlanUndo()
	if !ok || Describe(u.Diff) != "OLLAMA_NUM_PARALLEL 2 → 1" {
		t.Fatalf("undo = %+v", u)
	}
	if _, _, err := s.Restart(u, func(string) {}); err != nil {
		t.Fatal(err)
	}
	waitFor("parallel=1", 2)
}

// A session restarts its engine with the planned command line, undoes it,
// and a process that ignores SIGTERM is killed after the grace time.
func TestSessionRestartAndUndo(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "engine.log")
	script := filepath.Join(dir, "engine")
	// An "engine" that logs its arguments and ignores SIGTERM when asked.
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncase \"$*\" in *stubborn*) trap '' TERM;; esac\necho \"args: $*\"\nwhile :; do sleep 0.1; done\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := NewSession([]string{script, "--max-num-seqs", "16"}, nil, log, "http://127.0.0.1:1", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	first := s.Current()
	// waitLines waits for the n-th start's output (a start stopped before
	// it printed would prove nothing).
	waitLines := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if b, _ := os.ReadFile(log); strings.Count(string(b), "args:") >= n {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("start %d printed nothing", n)
	}
	waitLines(1)
	p := s.PlanFor("queue_backlog", []string{"--data-parallel-size 2", "--max-num-seqs 32"})
	if !p.OK() || Describe(p.Diff) != "--max-num-seqs 16 → 32" || len(p.NotApplied) != 1 {
		t.Fatalf("plan = %+v", p)
	}
	if p.Mark() != "applied: queue_backlog → --max-num-seqs 16 → 32" {
		t.Errorf("mark = %q", p.Mark())
	}
	np, st, err := s.Restart(p, func(string) {})
	if err != nil || st.Killed {
		t.Fatalf("restart: %v, %v", st, err)
	}
	if done, _ := first.Exited(); !done || np.PID == first.PID {
		t.Fatal("the old process is still running after the restart")
	}
	waitLines(2)
	u, ok := s.PlanUndo()
	if !ok || !slices.Equal(u.New, first.Args) || Describe(u.Diff) != "--max-num-seqs 32 → 16" {
		t.Fatalf("undo = %+v", u)
	}
	if _, _, err := s.Restart(u, func(string) {}); err != nil {
		t.Fatal(err)
	}
	waitLines(3)
	if s.CanUndo() {
		t.Error("undone once: nothing left to undo")
	}
	// The stubborn one is killed after the grace time.
	p = s.PlanFor("x", []string{"--stubborn"})
	if _, _, err := s.Restart(p, func(string) {}); err != nil {
		t.Fatal(err)
	}
	waitLines(4) // printed after its trap is set
	st = s.Current().Stop(300 * time.Millisecond)
	if !st.Killed || !strings.Contains(st.Exit, "killed") {
		t.Errorf("stop of an engine ignoring SIGTERM = %+v, want SIGKILL", st)
	}
	b, _ := os.ReadFile(log)
	if strings.Count(string(b), "args:") != 4 {
		t.Errorf("the log holds every start's output, appended: %q", b)
	}
	note, _ := os.ReadFile(s.Current().NotePath())
	if !strings.Contains(string(note), "pid: ") || !strings.Contains(string(note), "log: "+log) {
		t.Errorf("note beside the log = %q", note)
	}
}

// A change is kept only past the noise threshold; finishing requests at
// all beats finishing none.
func TestJudgeAgainstNoise(t *testing.T) {
	m := func(ttft float64, n int) Measure {
		return Measure{Served: true, Completed: n, TTFTp99ms: model.Some(ttft)}
	}
	n := MeasureNoise(GoalTTFT, m(1000, 10), m(1100, 10))
	if math.Abs(n.Need-1.21) > 1e-9 {
		t.Fatalf("noise 1000 vs 1100 ms: need ×%.3f, want 1.1² = 1.21", n.Need)
	}
	// A wide noise (a queue that grows between the two) still lets a
	// tenfold gain through: ratios, not differences.
	wide := MeasureNoise(GoalTTFT, m(4050, 10), m(2070, 10))
	if ok, why := Judge(GoalTTFT, m(2070, 12), m(164, 32), wide); !ok {
		t.Errorf("2.07 s → 164 ms under a ×1.96 noise: %s", why)
	}
	for _, c := range []struct {
		before, after Measure
		keep          bool
	}{
		{m(1000, 10), m(700, 10), true},   // −30 %: past the 18 % threshold
		{m(1000, 10), m(900, 10), false},  // −10 %: within the noise
		{m(1000, 10), m(1500, 10), false}, // worse
		{Measure{Served: true}, m(230, 32), true},
		{Measure{}, m(230, 32), true}, // it serves now
		{m(230, 32), Measure{}, false},
		// TTFT halved by finishing a third as much: not better.
		{Measure{Served: true, Completed: 11, TTFTp99ms: model.Some(14658), OutputTPS: model.Some(83)},
			Measure{Served: true, Completed: 4, TTFTp99ms: model.Some(7058), OutputTPS: model.Some(30)}, false},
	} {
		if got, why := Judge(GoalTTFT, c.before, c.after, n); got != c.keep {
			t.Errorf("Judge(%+v → %+v) = %v (%s), want %v", c.before, c.after, got, why, c.keep)
		}
	}
}

// The table writes the start and each change whole: "--max-model-len
// (default) → 55552" clipped at 42 columns lost the value, and the start
// showed its last five words ("0.3 --port 18922 --startup-time 2s").
func TestTrailTableWritesEachChangeWhole(t *testing.T) {
	start := "llmtop sim --scenario healthy --gpu-memory-utilization 0.3 --port 18922"
	tr := Trail{Start: start, Final: start + " --max-model-len 55552", Stopped: "no open finding",
		Steps: []Step{{N: 0, Command: start, Open: []string{"startup_max_len_kv"}, Kept: true},
			{N: 1, Finding: "startup_max_len_kv", Diff: []string{"--max-model-len (default) → 55552"}, Kept: true, Before: &Measure{},
				Measure: Measure{Served: true, Completed: 60, TTFTp99ms: model.Some(92), TPOTp99ms: model.Some(12)}}}}
	tab := tr.Table()
	if !strings.Contains(tab, "start: "+start+"\n") || !strings.Contains(tab, "startup_max_len_kv → --max-model-len (default) → 55552 ") {
		t.Errorf("table:\n%s", tab)
	}
	lines := strings.Split(tab, "\n")
	head, one := lines[2], lines[4]
	col := func(s, sub string) int { return len([]rune(s[:strings.Index(s, sub)])) }
	if col(head, "TTFT p99") != col(one, "not serving → 92 ms") {
		t.Errorf("columns do not line up:\n%s\n%s", head, one)
	}
}

// Each goal is judged against its own noise: TTFT spread ×2.45 between the
// two benchmarks while ITL moved 2 %, so an ITL p99 from 71 to 40 ms is
// past ITL's noise though not past TTFT's.
func TestJudgeAgainstItsGoalsNoise(t *testing.T) {
	a := Measure{Served: true, Completed: 30, TTFTp99ms: model.Some(100), ITLp99ms: model.Some(50)}
	b := Measure{Served: true, Completed: 30, TTFTp99ms: model.Some(245), ITLp99ms: model.Some(51)}
	tr := Trail{NoiseByGoal: MeasureNoises(a, b)}
	before := Measure{Served: true, Completed: 30, ITLp99ms: model.Some(71)}
	after := Measure{Served: true, Completed: 30, ITLp99ms: model.Some(40)}
	if ok, why := Judge(GoalITL, before, after, tr.NoiseFor(GoalITL)); !ok {
		t.Errorf("ITL p99 71 → 40 ms against a 2 %% ITL noise: %s", why)
	}
	if ok, _ := Judge(GoalITL, before, after, tr.NoiseFor(GoalTTFT)); ok {
		t.Error("against TTFT's ×2.45 noise the same change would not pass: the test proves nothing")
	}
	if n := tr.NoiseFor(GoalThroughput); n.A != 0 || n.Need != 1/(1-MinGain) {
		t.Errorf("output tok/s measured on neither benchmark: want the floor, got %+v", n)
	}
	if txt := tr.NoiseText(); !strings.Contains(txt, "ttft_p99 ×2.45") || !strings.Contains(txt, "itl_p99 ×1.02") {
		t.Errorf("noise text %q", txt)
	}
}

// A finding about requests the benchmark does not send (a LoRA adapter's)
// is judged by the server's own TTFT p99 over the run, which two
// benchmarks cannot measure the noise of: a third better is kept (the
// sim's lora-starved at --max-loras 2 → 4: 67.4 → 38.1 s), less is not,
// whatever the benchmark's own TTFT did.
func TestJudgeServerTTFT(t *testing.T) {
	n := Trail{}.NoiseFor(GoalServerTTFT)
	if n.Need != ServerTTFTNeed || !strings.Contains(n.How, "whole run") {
		t.Fatalf("noise %+v", n)
	}
	m := func(bench, server float64) Measure {
		return Measure{Served: true, Completed: 50, TTFTp99ms: model.Some(bench), ServerTTFTp99ms: model.Some(server)}
	}
	if ok, why := Judge(GoalServerTTFT, m(177, 67360), m(129, 38070), n); !ok {
		t.Errorf("67.4 → 38.1 s: %s", why)
	}
	if ok, why := Judge(GoalServerTTFT, m(177, 67360), m(20, 50000), n); ok {
		t.Errorf("67.4 → 50 s kept: %s", why)
	}
	if ok, why := Judge(GoalServerTTFT, m(177, 67360), Measure{Served: true, Completed: 50, TTFTp99ms: model.Some(20)}, n); ok || !strings.Contains(why, "not measured") {
		t.Errorf("no server TTFT after: %v %s", ok, why)
	}
}

// A change is judged against the noise of the configuration it changes:
// the kept step's own noise where it was measured, else the trail's. On
// the sim's lora-starved the start (queue-bound) spread ITL p99 ×1.51, the
// fixed engine a few per cent, and a step from it that cut ITL p99 from
// 40 to 24 ms was judged "within the noise" of the engine that was gone.
func TestKeptConfigurationsNoise(t *testing.T) {
	m := func(itl float64) Measure {
		return Measure{Served: true, Completed: 50, ITLp99ms: model.Some(itl), OutputTPS: model.Some(300)}
	}
	tr := Trail{NoiseByGoal: MeasureNoises(m(40), m(60.4))} // ×1.51: needs ×2.28
	tr.Steps = []Step{{N: 0, Kept: true}}
	before, after := m(40.1), m(24.4)
	if ok, _ := Judge(GoalITL, before, after, tr.KeptNoiseFor(GoalITL)); ok {
		t.Fatal("against the start's ×1.51 ITL noise 40.1 → 24.4 ms must not pass: the test proves nothing")
	}
	// Step 2 kept, its noise measured: ×1.04.
	tr.Steps = append(tr.Steps, Step{N: 1, Kept: true}, Step{N: 2, Kept: true, NoiseByGoal: MeasureNoises(m(40.1), m(41.7))},
		Step{N: 3, Kept: false, NoiseByGoal: MeasureNoises(m(10), m(90))})
	if n := tr.KeptNoiseFor(GoalITL); math.Abs(n.Factor-41.7/40.1) > 1e-9 {
		t.Errorf("want the kept step 2's noise (a step not kept does not count), got ×%.3f", n.Factor)
	}
	if ok, why := Judge(GoalITL, before, after, tr.KeptNoiseFor(GoalITL)); !ok {
		t.Errorf("against the kept configuration's ×1.04 noise 40.1 → 24.4 ms is better: %s", why)
	}
	// A kept step whose noise was not measured: the trail's stands (not the
	// step before it's).
	tr.Steps = append(tr.Steps, Step{N: 4, Kept: true})
	if n := tr.KeptNoiseFor(GoalITL); math.Abs(n.Factor-60.4/40) > 1e-9 {
		t.Errorf("kept step without its noise: want the trail's ×1.51, got ×%.3f", n.Factor)
	}
	tr.Steps = tr.Steps[:4]
	if tab := tr.Table(); !strings.Contains(tab, "noise on this configuration, for the steps after it: ") || !strings.Contains(tab, "itl_p99 ×1.04") {
		t.Errorf("table lacks the kept step's noise:\n%s", tab)
	}
}

// The verdict's numbers carry their unit: `llmtop tune` on the
// queue-buildup sim printed "kept: ttft_p99 7363 → 103 (-99 %)" two lines
// below "TTFT p99 7.36 s" and "TTFT p99 103 ms".
func TestJudgeWordsCarryTheUnit(t *testing.T) {
	lat := Measure{Served: true, Completed: 8, TTFTp99ms: model.Some(7363), OutputTPS: model.Some(102)}
	after := Measure{Served: true, Completed: 48, TTFTp99ms: model.Some(103), OutputTPS: model.Some(687)}
	n := MeasureNoise(GoalTTFT, lat, lat)
	if _, why := Judge(GoalTTFT, lat, after, n); !strings.Contains(why, "ttft_p99 7363 → 103 ms (-99 %)") {
		t.Errorf("TTFT verdict without its unit: %s", why)
	}
	if _, why := Judge(GoalThroughput, lat, after, n); !strings.Contains(why, "output_tps 102 → 687 tok/s (+574 %)") {
		t.Errorf("throughput verdict without its unit: %s", why)
	}
}
