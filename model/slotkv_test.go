package model

import (
	"strings"
	"testing"
	"time"
)

func TestLlamaKVLayout(t *testing.T) {
	for _, c := range []struct {
		log, cmdline   string
		slots          int
		known, unified bool
	}{
		{"true", "", 4, true, true},
		{"'false'", "llama-server -kvu", 2, true, false}, // the log wins: it is what the engine did
		{"", "llama-server -m m.gguf -c 2048", 4, true, true},
		{"", "llama-server -m m.gguf -c 2048 -np 2", 2, true, false},
		{"", "llama-server -m m.gguf --parallel=2", 2, true, false},
		{"", "llama-server -m m.gguf -np 2 -kvu", 2, true, true},
		{"", "llama-server -m m.gguf -np 2 --kv-unified", 2, true, true},
		{"", "llama-server -m m.gguf --no-kv-unified", 4, true, false},
		{"", "llama-server -m m.gguf -kvu -no-kvu", 4, true, false}, // the last flag wins
		{"", "llama-server -m m.gguf --parallel -1", 4, true, true},
		{"", "llama-server -m m.gguf -np", 4, false, false},
		{"", "llama-server -m m.gguf -np x", 4, false, false},
		{"", "llama-server -m m.gguf", 3, false, false}, // LLAMA_ARG_N_PARALLEL=3 leaves no trace on the command line
		{"", "", 4, false, false},
		{"", "/usr/bin/docker-proxy -proto tcp -host-ip 0.0.0.0 -host-port 8080 -container-ip 172.17.0.2 -container-port 8080", 4, false, false},
		{"", "/app/llama-server --host 0.0.0.0 -np 2", 2, true, false},
		{"", `C:\llama\llama-server.exe -m m.gguf`, 4, true, true},
		{"maybe", "", 4, false, false},
	} {
		l := LlamaKVLayout(c.log, c.cmdline, c.slots)
		if l.Known != c.known || l.Unified != c.unified || l.From == "" {
			t.Errorf("log %q cmdline %q slots %d: %+v, want known %v unified %v (with a reason)", c.log, c.cmdline, c.slots, l, c.known, c.unified)
		}
	}
}

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
