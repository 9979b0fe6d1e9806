package core

import (
	"maps"
	"slices"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// slotKV sizes a llama.cpp sample's KV pool from what the current run's
// config says of the cache's layout (its log's kv_unified, its process's
// command line): the adapter sees only /slots, which does not say. The
// sample's maps are the source's: they are copied before the change.
func slotKV(e *Endpoint, sm *model.Sample) {
	if _, ok := sm.Gauges[model.SlotCtx]; !ok {
		return
	}
	var logUnified, cmdline string
	if r := e.Current(); r != nil {
		logUnified, cmdline = r.Config["log.kv_unified"], r.Config["cmdline"]
	}
	sm.Gauges, sm.Notes = maps.Clone(sm.Gauges), slices.Clone(sm.Notes)
	model.SlotKV(sm, engines.LlamaKVLayout(logUnified, cmdline, int(sm.Gauges[model.MaxRunning])))
}
