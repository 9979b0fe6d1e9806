package engines

import (
	"testing"

	"github.com/llmtop/llmtop/model"
)

func TestPDRoleFromFlags(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want model.PDRole
	}{
		// vLLM's disaggregated prefill example (examples/online_serving/disaggregated_prefill.sh).
		{`vllm serve m --port 8100 --kv-transfer-config '{"kv_connector":"P2pNcclConnector","kv_role":"kv_producer","kv_rank":0}'`, model.RolePrefill},
		{`vllm serve m --kv-transfer-config {"kv_connector":"NixlConnector","kv_role":"kv_consumer"}`, model.RoleDecode},
		{`vllm serve m --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}'`, model.RoleUnified},
		{`python -m sglang.launch_server --model-path m --disaggregation-mode prefill --port 30000`, model.RolePrefill},
		{`python -m sglang.launch_server --model-path m --disaggregation-mode=decode`, model.RoleDecode},
		{`vllm serve m --max-num-seqs 256`, ""},
	} {
		if got, from := PDRoleFromFlags(c.cmd); got != c.want || (c.want != "" && from == "") {
			t.Errorf("%s: role %q from %q, want %q", c.cmd, got, from, c.want)
		}
	}
}

func TestPDRoleOfLabels(t *testing.T) {
	if r, ok := PDRoleOf(KServeRoleLabel, "both"); !ok || r != model.RoleUnified {
		t.Errorf("KServe both: %q %v", r, ok)
	}
	if _, ok := PDRoleOf(DynamoWorkerType, "backend"); ok {
		t.Error("Dynamo's backend names no P/D role")
	}
}

// A layer that re-exports an engine's metrics keeps their units: SGLang's
// gateway serves sglang_kv_transfer_latency_ms in ms as SGLang does.
func TestWrappedKeepsTheUnit(t *testing.T) {
	if s := ScaleOf(SGLangGatewayID, string(model.KVTransfer)); s != 1e-3 {
		t.Errorf("gateway's KV transfer scale %v, want SGLang's 1e-3", s)
	}
}
