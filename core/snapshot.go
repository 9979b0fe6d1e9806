package core

import (
	"time"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// Document is the JSON contract of `llmtop snapshot --json` and the TUI's
// `s` (docs/snapshot-json.md): the normalised state of every endpoint over
// the window, with its lifecycle and runs, the GPUs, and the open findings.
type Document struct {
	model.SnapshotJSON
	Findings []diagnosis.Finding `json:"findings"`
	// Silenced are the rules a person silenced, with until when (the
	// screen's d list; see core/ack.go); absent when none.
	Silenced map[string]time.Time `json:"silenced,omitempty"`
}

// Snapshot returns the document at the Monitor's clock: one entry per
// endpoint and model over the window, an entry with null metrics for an
// endpoint that gave none. An endpoint's log-derived picture is folded away
// when the endpoint is scraped; a log-only picture takes the endpoint's
// model name when it serves exactly one.
func (m *Monitor) Snapshot() Document {
	snap := model.SnapshotJSON{Time: m.now.UTC(), Endpoints: []model.EndpointJSON{}}
	seen := map[string]bool{}
	for _, k := range m.ModelKeys() {
		seen[k.Endpoint] = true
		st := m.store.State(k, m.opts.Window)
		ej := m.endpointJSON(k.Endpoint)
		ej.Model = k.Model
		if ej.Model == "" && len(ej.Models) == 1 {
			ej.Model = ej.Models[0]
		}
		ej.MaxContext = maxContext(m.eps[k.Endpoint], ej.Model)
		ej.Metrics = MetricsOf(st, ej.Engine)
		ej.Info, ej.Notes = st.Info, st.Notes
		if len(ej.Info) == 0 {
			ej.Info = nil
		}
		snap.Endpoints = append(snap.Endpoints, ej)
	}
	for _, u := range m.order {
		if !seen[u] {
			ej := m.endpointJSON(u)
			if len(ej.Models) > 0 {
				ej.Model = ej.Models[0]
				ej.MaxContext = maxContext(m.eps[u], ej.Model)
			}
			snap.Endpoints = append(snap.Endpoints, ej)
		}
	}
	if m.gpu != nil {
		g := *m.gpu
		snap.GPU = &g
	}
	doc := Document{SnapshotJSON: snap, Findings: m.rep.Findings}
	if sl := m.Silences(); len(sl) > 0 {
		doc.Silenced = sl
	}
	if doc.Findings == nil {
		doc.Findings = []diagnosis.Finding{}
	}
	return doc
}

// MetricsOf is st as the JSON's metrics object of an endpoint of engine e,
// in the engine's terms (engineTerms): snapshot's, the TUI's s and the
// benchmark's server view alike.
func MetricsOf(st model.State, e model.Engine) *model.MetricsJSON {
	m := model.MetricsOf(st)
	engineTerms(m, st, e)
	return m
}

// engineTerms says what the engine's own numbers are where they are not
// what their names suggest (engines/): what each distribution's count
// counts where it is not requests (engines.CountsOf: llama.cpp's TPOT is a
// mean over generated tokens; a count the log gave is its requests), and
// which seconds its own throughput gauges divide by (ThroughputOf:
// llama.cpp's divide by its slots' processing time).
func engineTerms(m *model.MetricsJSON, st model.State, e model.Engine) {
	t := ThroughputOf(st, e)
	m.PromptTokensPerS, m.GenerationTokensPerS = t.Prompt, t.Gen
	m.EnginePromptTokensPerS, m.EngineGenerationTokensPerS = t.OwnPrompt, t.OwnGen
	if t.Busy {
		m.EngineRatesOver = "busy_time"
	}
	for l, d := range map[model.Latency]*model.DistJSON{
		model.TTFT: &m.TTFTms, model.TPOT: &m.TPOTms, model.ITL: &m.ITLms, model.E2E: &m.E2Ems,
		model.Queue: &m.Queuems, model.Prefill: &m.Prefillms, model.Decode: &m.Decodems,
	} {
		if d.Source != model.FromLog && d.Count.OK {
			d.CountOf = engines.CountsOf(e, string(l))
		}
		if ss, ok := m.SinceStart[string(l)+"_ms"]; ok && ss.Source != model.FromLog && ss.Count.OK {
			ss.CountOf = engines.CountsOf(e, string(l))
			m.SinceStart[string(l)+"_ms"] = ss
		}
	}
}

func (m *Monitor) endpointJSON(url string) model.EndpointJSON {
	ej := model.EndpointJSON{URL: url, Models: []string{}, Health: model.HealthUnknown, State: model.LifeUnknown, Runs: []model.Run{},
		Status: string(m.StatusOf(url))}
	e := m.eps[url]
	if e == nil {
		ej.Error = "not scraped"
		return ej
	}
	id := e.Identity
	ej.Engine, ej.Version, ej.Simulated, ej.Error, ej.Hint = e.engine(), e.version(), id.Simulated, e.Err, e.Hint
	ej.Answered = e.Answered()
	ej.Role, ej.RoleFrom, ej.Via, ej.Layer, ej.LayerDetail = id.Role, id.RoleFrom, id.Via, id.Layer, id.LayerDetail
	if e.Scrapes == 0 {
		ej.Error = "not scraped"
	}
	if id.Health != "" {
		ej.Health = id.Health
	}
	ej.Models = append(ej.Models, modelIDs(id)...)
	for _, mi := range id.Models {
		if mi.NotLoaded() {
			ej.NotLoaded = append(ej.NotLoaded, mi.ID)
		}
	}
	ej.State, ej.StateDetail = e.Life, e.LifeDetail
	ej.Runs = append(ej.Runs, e.Runs...)
	ej.Host = e.Host
	originJSON(&ej, e)
	return ej
}

// maxContext is the model's context length when the engine says it, else
// the first model's.
func maxContext(e *Endpoint, name string) model.Opt {
	if e == nil {
		return model.None
	}
	for _, mi := range e.Identity.Models {
		if mi.ID == name && mi.MaxContext > 0 {
			return model.Some(float64(mi.MaxContext))
		}
	}
	if ms := e.Identity.Models; len(ms) > 0 && ms[0].MaxContext > 0 {
		return model.Some(float64(ms[0].MaxContext))
	}
	return model.None
}
