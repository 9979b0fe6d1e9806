package diagnosis

import "github.com/llmtop/llmtop/model"

// The verdicts the rules and the screen share: the screen colours a row by
// the same judgment that opens the rule's finding (tui's signal rows, the
// GPU bars, the finish mix), so a red number and a finding never disagree.

// EngineGPUs are the devices the engine runs on; all of them when no
// process says so (no process list, or another PID namespace). Where that
// is every device it is the snapshot's own list, not a copy: the rules ask
// it several times a second (8 GPUs copied 66 KB a scrape); the caller
// must not change it.
func EngineGPUs(g *model.GPUSnapshot) []model.GPU {
	if g == nil {
		return nil
	}
	n := 0
	for i := range g.GPUs {
		if servesEngine(&g.GPUs[i]) {
			n++
		}
	}
	if n == 0 || n == len(g.GPUs) {
		return g.GPUs
	}
	out := make([]model.GPU, 0, n)
	for i := range g.GPUs {
		if servesEngine(&g.GPUs[i]) {
			out = append(out, g.GPUs[i])
		}
	}
	return out
}

// EngineGPUUtil is the mean utilisation (%) of the engine's GPUs, the
// number gpu_idle_waiting judges; None without a reading.
func EngineGPUUtil(g *model.GPUSnapshot) model.Opt {
	if g == nil || g.Err != "" {
		return model.None
	}
	sum, n := 0.0, 0
	for _, d := range EngineGPUs(g) {
		if d.Util.OK {
			sum += d.Util.V
			n++
		}
	}
	if n == 0 {
		return model.None
	}
	return model.Some(sum / float64(n))
}

// hotMargin is how far under its slowdown temperature a GPU is called hot.
const hotMargin = 3

// GPUHeat is gpu_throttle's word on a GPU's temperature: SevWarn within
// hotMargin °C of its slowdown temperature, SevCrit at or past it, SevOK
// under; known is false without both readings (no verdict).
func GPUHeat(d model.GPU) (sev model.Severity, known bool) {
	if !d.Temp.OK || !d.TempSlowdown.OK {
		return model.SevInfo, false
	}
	switch {
	case d.Temp.V >= d.TempSlowdown.V:
		return model.SevCrit, true
	case d.Temp.V >= d.TempSlowdown.V-hotMargin:
		return model.SevWarn, true
	}
	return model.SevInfo, true
}

// ErrorReasons are the finish reasons that are the engine (or the API in
// front of it) failing a request: vLLM/TRT-LLM "error"; TGI's
// tgi_request_failure err labels (router/src: validation is a 4xx,
// generation and incomplete a failed stream; "failure" is llmtop's name for
// one without an err label). TGI's "overloaded" is a rejection at
// admission (429), judged by api_rejections.
var ErrorReasons = []string{"error", "generation", "incomplete", "validation", "dropped", "failure"}

// FinishAlarm is finish_errors' word on a state's finish mix: SevCrit when
// failures alone reach the share, SevWarn when aborts and failures
// together do, SevInfo under it; known is false with too few finished
// requests to judge (or no finish reasons).
func FinishAlarm(st model.State, cfg Config) (sev model.Severity, known bool) {
	if st.FinishShare == nil {
		return model.SevInfo, false
	}
	var n float64
	for _, c := range st.FinishCount {
		n += c
	}
	if n < cfg.MinFinished {
		return model.SevInfo, false
	}
	ab, er := st.FinishShare["abort"], 0.0
	for _, r := range ErrorReasons {
		er += st.FinishShare[r]
	}
	switch {
	case er >= cfg.FinishErrorShare:
		return model.SevCrit, true
	case ab+er >= cfg.FinishErrorShare:
		return model.SevWarn, true
	}
	return model.SevInfo, true
}
