package engines

import (
	"slices"
	"sync"

	"github.com/llmtop/llmtop/model"
)

// KServeID is KServe's LLMInferenceService serving vLLM
// (SERVING-LAYERS.md §3f; kserve pkg/controller/v1alpha2/llmisvc/monitoring.go):
// its PodMonitor scrapes each vLLM pod (port 8000, https) and renames every
// family kserve_<name> (metricRelabelConfigs __name__ → kserve_$1), with
// the pod's role (llm-d.ai/role: prefill, decode or both) as llm_isvc_role.
// The pod's own /metrics carries vLLM's names: the kserve_ names live only
// in the Prometheus that scraped it (--prometheus) and in what it federates.
const KServeID model.Engine = "kserve"

// kservePrefix is what KServe's relabelling puts before every name.
const kservePrefix = "kserve_"

// KServeRoleLabel is the label KServe adds with the pod's P/D role.
const KServeRoleLabel = "llm_isvc_role"

// KServe is read by the vLLM adapter once the prefix is cut; each pod is its
// own vLLM engine with its own KV pool.
var KServe = Spec{
	ID:          KServeID,
	Name:        "KServe (vLLM)",
	Aliases:     []string{"llmisvc", "kserve-vllm"},
	Prefixes:    []string{kservePrefix + "vllm:"},
	MetricsPath: "/metrics",
	Hint404: "KServe renames vLLM's metrics kserve_vllm:… in Prometheus only: point llmtop at a vLLM pod's own " +
		"/metrics (https on port 8000) or at the Prometheus that scrapes it (--prometheus)",
	ModelLabel: "model_name",
	DPLabel:    "pod",
	KVAgg:      "max",
	Fleet:      VLLM.Fleet,
	Like:       model.VLLM,
	Reexport:   kservePrefix,
	RoleLabel:  KServeRoleLabel,
	Levers:     VLLM.Levers,
	Metrics:    prefixed(kservePrefix, vllmMetrics),
}

// WrapperPrefixes are the prefixes a wrapping layer puts before another
// system's families: a router's or picker's families under one of them
// (kserve_llm_d_epp_…) are still that router's. The list is built once
// (every scrape asks it of every family name); the caller must not change
// it.
func WrapperPrefixes() []string { return slices.Clip(wrapperPrefixes()) }

var wrapperPrefixes = sync.OnceValue(func() []string {
	var out []string
	for _, s := range all {
		if s.Reexport != "" && s.Strips == "" {
			out = append(out, s.Reexport)
		}
	}
	return out
})
