package exporter

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// A scrape of a 200-endpoint fleet with every latency present and 100 open
// findings: what one Prometheus scrape of `llmtop export` costs.
func BenchmarkCollectFleet(b *testing.B) {
	v := &View{Time: t0, Window: 60e9}
	d := model.DistJSON{P50: model.Some(120), P90: model.Some(300), P99: model.Some(900), Mean: model.Some(150), Count: model.Some(1000), Estimate: true}
	for i := range 200 {
		u := fmt.Sprintf("http://10.0.%d.%d:8000", i/250, i%250)
		v.Endpoints = append(v.Endpoints, Endpoint{URL: u, Engine: model.VLLM, Version: "0.11.0", State: model.LifeServing, Scrapes: 10, Up: true, LastOK: t0})
		v.Series = append(v.Series, Series{Endpoint: u, Engine: model.VLLM, Model: "meta-llama/Llama-3.1-8B-Instruct", Metrics: model.MetricsJSON{
			Running: model.Some(30), Waiting: model.Some(4), KVCacheUsageRatio: model.Some(0.7), GenerationTokensPerS: model.Some(2000),
			PromptTokensPerS: model.Some(3000), RequestsPerS: model.Some(5), WindowS: 60,
			TTFTms: d, TPOTms: d, ITLms: d, E2Ems: d, Queuems: d}})
		if i%2 == 0 {
			v.Findings = append(v.Findings, diagnosis.Finding{ID: "ttft_high", Endpoint: u, Category: diagnosis.Queueing, Severity: model.SevWarn,
				Title: "TTFT over SLO: requests wait in the queue", Opened: t0, Actions: []diagnosis.Action{{Change: "--max-num-seqs 48"}}})
		}
	}
	c := New("bench")
	c.Publish(v)
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
