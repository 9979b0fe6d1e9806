package tui

import (
	"encoding/json"

	"github.com/llmtop/llmtop/model"
)

// BuildSnapshot is the screen's numbers as `llmtop snapshot --json` writes
// them: one entry per endpoint and model over the current window, and the
// GPUs. An endpoint's log-derived picture is folded away when the endpoint
// is scraped (the same endpoint, not a second one); a log-only picture
// takes the endpoint's model name when it serves exactly one.
func BuildSnapshot(d *Data) model.SnapshotJSON {
	snap := model.SnapshotJSON{Time: d.Now, Endpoints: []model.EndpointJSON{}}
	seen := map[string]bool{}
	for _, k := range d.ModelKeys() {
		seen[k.Endpoint] = true
		st := d.Store.State(k, d.Window)
		ej := endpointJSON(d.Info[k.Endpoint], k.Endpoint)
		ej.Model = k.Model
		if ej.Model == "" && len(ej.Models) == 1 {
			ej.Model = ej.Models[0]
		}
		ej.Metrics = model.MetricsOf(st)
		ej.Info, ej.Notes = st.Info, st.Notes
		if mi := modelInfo(d.Info[k.Endpoint], k.Model); mi != nil && mi.MaxContext > 0 {
			ej.MaxContext = model.Some(float64(mi.MaxContext))
		}
		snap.Endpoints = append(snap.Endpoints, ej)
	}
	for _, u := range d.Endpoints {
		if !seen[u] {
			snap.Endpoints = append(snap.Endpoints, endpointJSON(d.Info[u], u))
		}
	}
	if d.GPU != nil {
		g := *d.GPU
		snap.GPU = &g
	}
	return snap
}

func endpointJSON(e *EndpointInfo, url string) model.EndpointJSON {
	ej := model.EndpointJSON{URL: url, Models: []string{}, Health: model.HealthUnknown}
	if e == nil {
		return ej
	}
	id := e.Identity
	ej.Engine, ej.Version, ej.Simulated, ej.Error, ej.Hint = id.Engine, id.Version, id.Simulated, e.Err, e.Hint
	if id.Health != "" {
		ej.Health = id.Health
	}
	for _, m := range id.Models {
		ej.Models = append(ej.Models, m.ID)
	}
	if len(id.Models) > 0 && id.Models[0].MaxContext > 0 {
		ej.MaxContext = model.Some(float64(id.Models[0].MaxContext))
	}
	return ej
}

func snapshotBytes(s model.SnapshotJSON) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
