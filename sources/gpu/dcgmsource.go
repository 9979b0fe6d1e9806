package gpu

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/llmtop/llmtop/model"
)

// maxDCGMBody caps a scrape: a node with 8 GPUs and every DCGM field is
// well under 1 MiB.
const maxDCGMBody = 16 << 20

// NewDCGM returns the source that reads a DCGM exporter's /metrics (for
// Kubernetes setups where NVML is not reachable from where llmtop runs).
func NewDCGM(cfg Config, url string) *Source {
	if !strings.Contains(url, "://") {
		url = "http://" + url
	}
	if !strings.Contains(strings.SplitN(url, "://", 2)[1], "/") {
		url += "/metrics"
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	return newSource(cfg, &dcgmReader{url: url, filter: cfg.Filter, timeout: timeout,
		client: &http.Client{Timeout: timeout}, lastXid: map[string]float64{}})
}

type dcgmReader struct {
	url     string
	filter  Filter
	timeout time.Duration
	client  *http.Client
	lastXid map[string]float64 // by UUID (or host/index): raise an event when it changes
}

func (r *dcgmReader) fetch() ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return nil, fmt.Errorf("DCGM exporter URL %q: %w", r.url, err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("DCGM exporter unreachable: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("DCGM exporter %s returned %s: check the URL (the exporter listens on :9400/metrics by default)", r.url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDCGMBody+1))
	if err != nil {
		return nil, fmt.Errorf("DCGM exporter read failed: %w", err)
	}
	if len(body) > maxDCGMBody {
		return nil, fmt.Errorf("DCGM exporter response larger than %d MiB", maxDCGMBody>>20)
	}
	return body, nil
}

func (r *dcgmReader) refresh(now time.Time) (model.GPUSnapshot, []model.Event) {
	snap := model.GPUSnapshot{}
	body, err := r.fetch()
	if err != nil {
		snap.Err = err.Error()
		return snap, nil
	}
	sc, perr := ParseDCGM(body)
	snap.Driver = sc.Driver
	var events []model.Event
	for _, g := range sc.GPUs {
		if !r.filter.Allows(g.Index, g.UUID) {
			continue
		}
		if ev, ok := r.xidEvent(now, g); ok {
			events = append(events, ev)
		}
		snap.GPUs = append(snap.GPUs, g.GPU)
	}
	var notes []string
	if perr != nil {
		notes = append(notes, perr.Error())
	}
	if len(sc.GPUs) == 0 && perr == nil {
		snap.Err = "DCGM exporter at " + r.url + " reports no DCGM_FI_DEV_* metrics"
	}
	snap.Note = joinNotes(append([]string{r.filter.Note(), "from DCGM exporter (no process list)"}, notes...)...)
	return snap, events
}

// xidEvent raises an event when a device's last Xid changes to a new
// non-zero value.
func (r *dcgmReader) xidEvent(now time.Time, g DCGMGPU) (model.Event, bool) {
	if !g.Xid.OK {
		return model.Event{}, false
	}
	key := g.UUID
	if key == "" {
		key = fmt.Sprintf("%s/%d", g.Host, g.Index)
	}
	prev, seen := r.lastXid[key]
	r.lastXid[key] = g.Xid.V
	if g.Xid.V == 0 || (seen && prev == g.Xid.V) {
		return model.Event{}, false
	}
	code := int(g.Xid.V)
	what, sev := xidMeaning(code)
	return gpuEvent(now, KindGPUXid, sev, "availability",
		fmt.Sprintf("GPU %d (%s) reported Xid %d: %s", g.Index, g.Name, code, what),
		map[string]string{"gpu": fmt.Sprint(g.Index), "uuid": g.UUID, "xid": fmt.Sprint(code)}), true
}

// xidMeaning names the Xids an inference operator meets most, after
// NVIDIA's Xid catalogue; others point there.
func xidMeaning(code int) (string, model.Severity) {
	switch code {
	case 13:
		return "graphics engine exception (usually the application)", model.SevWarn
	case 31:
		return "GPU memory page fault (usually the application)", model.SevWarn
	case 43:
		return "GPU stopped processing (application fault)", model.SevWarn
	case 45:
		return "preemptive cleanup after an earlier error", model.SevInfo
	case 48:
		return "double-bit ECC error", model.SevCrit
	case 63:
		return "ECC page retirement or row remapping", model.SevWarn
	case 64:
		return "row remapping failed", model.SevCrit
	case 74:
		return "NVLink error", model.SevCrit
	case 79:
		return "GPU has fallen off the bus", model.SevCrit
	case 92:
		return "high single-bit ECC error rate", model.SevWarn
	case 94:
		return "contained ECC error", model.SevWarn
	case 95:
		return "uncontained ECC error: reset the GPU", model.SevCrit
	case 119, 120:
		return "GSP firmware error", model.SevCrit
	}
	return "see NVIDIA's Xid catalogue", model.SevWarn
}

func (r *dcgmReader) close() { r.client.CloseIdleConnections() }
