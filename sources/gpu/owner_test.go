package gpu

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Issue 14 item 7: the exporter's host and Kubernetes labels are the GPU's
// owner, not folded into its name. Labels as dcgm-exporter writes them with
// its pod mapping (pod, namespace, container), and as a Prometheus that
// scraped it re-exports them (exported_pod beside its own pod label).
func TestDCGMOwnerLabels(t *testing.T) {
	body := []byte(`DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",device="nvidia0",modelName="NVIDIA L40S",Hostname="n1",container="vllm",namespace="llm",pod="vllm-0"} 1
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-b",device="nvidia1",modelName="NVIDIA L40S",Hostname="n1",container="vllm",namespace="llm",pod="vllm-1"} 2
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-c",device="nvidia0",modelName="NVIDIA L40S",Hostname="n2",exported_container="sglang",exported_namespace="team-b",exported_pod="sglang-0",namespace="gpu-operator",pod="nvidia-dcgm-exporter-x7k2p"} 3
`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	snap, _ := NewDCGM(Config{}, srv.URL+"/metrics").Refresh()
	if len(snap.GPUs) != 3 {
		t.Fatalf("%+v", snap.GPUs)
	}
	want := []struct{ name, host, ns, pod, container string }{
		{"NVIDIA L40S", "n1", "llm", "vllm-0", "vllm"},
		{"NVIDIA L40S", "n1", "llm", "vllm-1", "vllm"},
		{"NVIDIA L40S", "n2", "team-b", "sglang-0", "sglang"},
	}
	for i, w := range want {
		g := snap.GPUs[i]
		if g.Name != w.name {
			t.Errorf("GPU %d name %q, want %q", i, g.Name, w.name)
		}
		if o := g.Owner; o == nil || o.Host != w.host || o.Namespace != w.ns || o.Pod != w.pod || o.Container != w.container {
			t.Errorf("GPU %d owner %+v, want %+v", i, o, w)
		}
	}
}
