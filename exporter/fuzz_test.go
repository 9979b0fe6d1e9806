package exporter

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
)

// Whatever an engine names its model, whatever a finding's title or a URL
// holds, a scrape of the exporter succeeds, parses, and carries only
// bounded, printable, valid UTF-8 labels and never the URL's password.
func FuzzCollectorLabels(f *testing.F) {
	f.Add("meta-llama/Llama-3.1-8B-Instruct", "http://u:pw@h:8000/?token=t0k", "KV cache full (99 %)")
	f.Add("evil\x1b[2J\xff\xfe", "http://h:1", strings.Repeat("ä", 300))
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, modelName, url, title string) {
		const secret = "Zq9SecretPw"
		raw := "http://admin:" + secret + "@" + url
		c := New(title)
		c.Publish(&View{
			Endpoints: []Endpoint{{URL: raw, Engine: model.VLLM, Version: title, Scrapes: 1, Up: true}, {URL: url, Scrapes: 1}},
			Series: []Series{
				{Endpoint: raw, Engine: model.VLLM, Model: modelName, Metrics: model.MetricsJSON{Running: model.Some(1)}},
				{Endpoint: raw, Engine: model.VLLM, Model: modelName + "\x00", Metrics: model.MetricsJSON{Running: model.Some(2)}},
			},
			Findings: []diagnosis.Finding{
				{ID: modelName, Endpoint: raw, Title: title, Actions: []diagnosis.Action{{Change: title}}},
				{ID: modelName, Endpoint: url, Title: title},
			},
			NotChecked: []string{raw + ": " + title},
		})
		out, fams := gather(t, c)
		if strings.Contains(out, secret) {
			t.Fatalf("the password reached the output")
		}
		for _, mf := range fams {
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					v := l.GetValue()
					if len(v) > MaxLabelLen || !utf8.ValidString(v) ||
						strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }) {
						t.Fatalf("%s{%s=%q}: not a bounded printable label", mf.GetName(), l.GetName(), v)
					}
				}
			}
		}
	})
}
