package model

import (
	"strings"
	"testing"
	"time"
)

func slotSample(held, ctx, n float64) Sample {
	s := NewSample("u", "m", time.Unix(0, 0), FromScrape)
	s.Gauges[SlotHeld], s.Gauges[SlotCtx], s.Gauges[MaxRunning] = held, ctx, n
	s.Gauges[KVUsage], s.Gauges[KVCapacityTokens] = held/(ctx*n), ctx*n
	return s
}

func TestSlotKV(t *testing.T) {
	unified := KVLayout{Known: true, Unified: true, From: "the log: kv_unified = 'true'"}
	split := KVLayout{Known: true, From: "the log: kv_unified = 'false'"}
	for _, c := range []struct {
		name         string
		s            Sample
		l            KVLayout
		kv, capacity float64
		top          float64 // 0: no KVUsageMax
		note         string
	}{
		{"unified", slotSample(1000, 2048, 4), unified, 1000.0 / 2048, 2048, 0, "unified KV cache (from the log: kv_unified = 'true')"},
		{"split", slotSample(1000, 1024, 2), split, 1000.0 / 2048, 2048, 0, "split KV cache"},
		{"unknown", slotSample(1000, 2048, 4), KVLayout{}, 1000.0 / 8192, -1, 1000.0 / 2048, "KV usage ≥ 12 %, up to 49 % (4×) if the KV cache is unified"},
		{"one slot needs no layout", slotSample(500, 2048, 1), KVLayout{}, 500.0 / 2048, 2048, 0, ""},
		// More held than one slot's n_ctx cannot be unified: the top is capped at full.
		{"unknown, top capped", slotSample(3000, 2048, 2), KVLayout{}, 3000.0 / 4096, -1, 1, "up to 100 %"},
	} {
		t.Run(c.name, func(t *testing.T) {
			SlotKV(&c.s, c.l)
			if got := c.s.Gauges[KVUsage]; got != c.kv {
				t.Errorf("KV usage %v, want %v", got, c.kv)
			}
			if got, ok := c.s.Gauges[KVCapacityTokens]; c.capacity < 0 && ok || c.capacity >= 0 && got != c.capacity {
				t.Errorf("capacity %v (set %v), want %v (-1: none)", got, ok, c.capacity)
			}
			if got, ok := c.s.Gauges[KVUsageMax]; (c.top == 0) == ok || got != c.top {
				t.Errorf("KV usage max %v (set %v), want %v", got, ok, c.top)
			}
			if notes := strings.Join(c.s.Notes, " "); !strings.Contains(notes, c.note) || c.note == "" && notes != "" {
				t.Errorf("notes %q, want %q", notes, c.note)
			}
		})
	}
}

func TestSlotKVLeavesOtherSamples(t *testing.T) {
	s := NewSample("u", "m", time.Unix(0, 0), FromScrape)
	s.Gauges[KVUsage] = 0.5
	SlotKV(&s, KVLayout{})
	if s.Gauges[KVUsage] != 0.5 || len(s.Notes) != 0 || len(s.Gauges) != 1 {
		t.Errorf("a sample without slot facts changed: %v %q", s.Gauges, s.Notes)
	}
	bad := slotSample(100, 0, 4)
	SlotKV(&bad, KVLayout{})
	if _, ok := bad.Gauges[KVUsageMax]; ok || len(bad.Notes) != 0 {
		t.Errorf("a zero n_ctx was used: %v %q", bad.Gauges, bad.Notes)
	}
}

// With a real llama-server the KV gauge on the screen came from /slots,
// and the `e` overlay's KV row had no "read now" line (every other row
// named what it read): SlotKV names its source.
func TestSlotKVNamesItsSource(t *testing.T) {
	s := NewSample("http://127.0.0.1:8080", "m", t0, FromScrape)
	s.Gauges[SlotHeld], s.Gauges[SlotCtx], s.Gauges[MaxRunning] = 475, 4096, 2
	SlotKV(&s, KVLayout{Known: true, From: "the log: kv_unified = 'false'"})
	if got := s.From[string(KVUsage)]; !strings.Contains(got, "/slots") {
		t.Errorf("KV read from %q, want /slots", got)
	}
}
