package main

import (
	"context"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/session"
)

// Issue 30: diagnose runs on the session every face runs on, so a source
// registered once (wire_*.go) feeds it as it feeds the monitor and export.
// Before, diagnose started copies of the engine, log, host, GPU and
// Prometheus sources of its own, and a source registered beside them
// never reached it. Here the only answer comes from such a source: the
// endpoint itself refuses.
func TestDiagnoseStartsTheRegisteredSources(t *testing.T) {
	const url = "http://127.0.0.1:1"
	saved := sourcePlugins
	defer func() { sourcePlugins = saved }()
	stopped := make(chan struct{})
	sourcePlugins = append(append([]sourcePlugin(nil), saved...), sourcePlugin{Name: "fake",
		Start: func(ctx context.Context, env *session.Env) error {
			env.Stopped = append(env.Stopped, stopped)
			go func() {
				defer close(stopped)
				now := time.Now()
				env.Send(model.Scrape{Endpoint: url, Time: now, Identity: model.Identity{Engine: model.VLLM, Health: model.HealthUp},
					Samples: []model.Sample{{Endpoint: url, Time: now, Gauges: map[model.Gauge]float64{model.Running: 1}}}})
				<-ctx.Done()
			}()
			return nil
		}})
	res, code := diagnoseOnce(t, time.Second, url)
	if code == 3 || len(res.Endpoints) != 1 || !res.Endpoints[0].Answered {
		t.Fatalf("exit %d, endpoints %+v: the registered source's scrape did not reach diagnose's core", code, res.Endpoints)
	}
	select {
	case <-stopped:
	default:
		t.Error("diagnose returned before the registered source said it had stopped")
	}
}
