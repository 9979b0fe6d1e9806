package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

func pdFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pd", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The KV hand-over names llmtop reads are the ones the engines' source
// declares (testdata/pd; a Python counter is served with _total).
func TestPDNamesAreTheSource(t *testing.T) {
	vllm := pdFile(t, "vllm-nixl-stats-bd33ba3e.py.txt")
	for _, n := range []string{engines.VLLMNixlBytes, strings.TrimSuffix(engines.VLLMNixlExpired, "_total"), engines.VLLMNixlXferTime} {
		if !strings.Contains(vllm, `name="`+n+`"`) {
			t.Errorf("%s not in vLLM's NIXL stats", n)
		}
	}
	if !strings.Contains(vllm, "tracked on the P instance") || !strings.Contains(vllm, "throughput_mb_s = total_mb / total_time_seconds") {
		t.Error("vLLM's excerpt lost the side its expiries are counted on, or its throughput")
	}
	sg := pdFile(t, "sglang-metrics-collector-016d8605.py.txt")
	for _, n := range []string{engines.SGLangBootstrapQ, engines.SGLangPreallocQueue, engines.SGLangTransferQueue, engines.SGLangKVTransferMB, engines.SGLangKVTransferLat} {
		if !strings.Contains(sg, `name="`+n+`"`) {
			t.Errorf("%s not in SGLang's collector", n)
		}
	}
	if !strings.Contains(sg, `the total is recorded under`+"\n"+`        # priority="" (the default label value)`) || !strings.Contains(sg, "total_mb = total_bytes / (1024 * 1024)") {
		t.Error("SGLang's excerpt lost how a queue total is written, or the unit of its transfer size")
	}
}

// A real SGLang prefill's transfer sizes (83 transfers, 189.0 MB): the
// bytes moved, in bytes.
func TestSGLangRealPrefillTransferBytes(t *testing.T) {
	ss := mapSGLang(mustParse(t, []byte(pdFile(t, "sglang-prefill-kv-transfer-total-mb.txt"))), testMeta(""))
	if len(ss) != 1 {
		t.Fatalf("%d samples", len(ss))
	}
	if b := ss[0].Counters[model.KVTransferBytes]; b != 189*1048576 || ss[0].From[string(model.KVTransferBytes)] != engines.SGLangKVTransferMB {
		t.Errorf("bytes %v from %q", b, ss[0].From[string(model.KVTransferBytes)])
	}
}

// With priority scheduling on, SGLang writes each queue's total under
// priority="" and again by priority: the total is read once.
func TestSGLangQueueTotalsNotDoubled(t *testing.T) {
	body := `# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{engine_type="decode",model_name="m",priority="",tp_rank="0"} 7
sglang:num_queue_reqs{engine_type="decode",model_name="m",priority="0",tp_rank="0"} 3
sglang:num_queue_reqs{engine_type="decode",model_name="m",priority="1",tp_rank="0"} 4
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{engine_type="decode",model_name="m",priority="",tp_rank="0"} 20
sglang:num_running_reqs{engine_type="decode",model_name="m",priority="0",tp_rank="0"} 20
# TYPE sglang:num_decode_prealloc_queue_reqs gauge
sglang:num_decode_prealloc_queue_reqs{engine_type="decode",model_name="m",priority="",tp_rank="0"} 5
sglang:num_decode_prealloc_queue_reqs{engine_type="decode",model_name="m",priority="0",tp_rank="0"} 5
# TYPE sglang:num_decode_transfer_queue_reqs gauge
sglang:num_decode_transfer_queue_reqs{engine_type="decode",model_name="m",priority="",tp_rank="0"} 2
`
	ss := mapSGLang(mustParse(t, []byte(body)), testMeta(""))
	if len(ss) != 1 {
		t.Fatalf("%d samples", len(ss))
	}
	g := ss[0].Gauges
	if g[model.Waiting] != 7 || g[model.Running] != 20 || g[model.PDPreallocQueue] != 5 || g[model.PDTransferQueue] != 2 {
		t.Errorf("gauges %v", g)
	}
	if _, ok := g[model.PDBootstrapQueue]; ok {
		t.Error("a bootstrap queue read where none is served")
	}
	// Without priority scheduling there is no priority label: each series
	// is a total.
	plain := `# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{engine_type="decode",model_name="m",tp_rank="0"} 9
`
	if w := mapSGLang(mustParse(t, []byte(plain)), testMeta(""))[0].Gauges[model.Waiting]; w != 9 {
		t.Errorf("waiting %v without priorities, want 9", w)
	}
}

// vLLM's NIXL bytes (the histogram's sum) and its prefill-side expiries.
func TestVLLMNixlBytesAndExpiries(t *testing.T) {
	body := `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3
# TYPE vllm:nixl_bytes_transferred histogram
vllm:nixl_bytes_transferred_bucket{engine="0",model_name="m",le="+Inf"} 40
vllm:nixl_bytes_transferred_sum{engine="0",model_name="m"} 3.2e+09
vllm:nixl_bytes_transferred_count{engine="0",model_name="m"} 40
# TYPE vllm:nixl_num_kv_expired_reqs_total counter
vllm:nixl_num_kv_expired_reqs_total{engine="0",model_name="m"} 2
`
	ss := mapVLLM(mustParse(t, []byte(body)), testMeta(""))
	if len(ss) != 1 || ss[0].Counters[model.KVTransferBytes] != 3.2e9 || ss[0].Counters[model.KVExpired] != 2 {
		t.Fatalf("%+v", ss)
	}
}

// Dynamo's TensorRT-LLM worker: its transfer names and role label are the
// ones its source declares, read as seconds and bytes, the role from
// disaggregation_mode.
func TestDynamoTRTLLMTransfer(t *testing.T) {
	src := pdFile(t, "dynamo-trtllm-kv-transfer.txt")
	for _, n := range []string{engines.TRTLLMKVTransferLat, engines.TRTLLMKVTransferBytes} {
		if !strings.Contains(src, `"`+n+`"`) {
			t.Errorf("%s not in Dynamo's names", n)
		}
	}
	if !strings.Contains(src, `The `+"`"+engines.TRTLLMDisaggMode+"`"+` label ("prefill", "decode", "prefill_and_decode")`) {
		t.Error("the role label is not the source's")
	}
	body := `# TYPE trtllm_num_requests_running gauge
trtllm_num_requests_running{disaggregation_mode="decode",engine_type="trtllm",model_name="m"} 5
# TYPE trtllm_kv_transfer_latency_seconds histogram
trtllm_kv_transfer_latency_seconds_bucket{disaggregation_mode="decode",engine_type="trtllm",model_name="m",le="0.5"} 9
trtllm_kv_transfer_latency_seconds_bucket{disaggregation_mode="decode",engine_type="trtllm",model_name="m",le="+Inf"} 10
trtllm_kv_transfer_latency_seconds_sum{disaggregation_mode="decode",engine_type="trtllm",model_name="m"} 2.5
trtllm_kv_transfer_latency_seconds_count{disaggregation_mode="decode",engine_type="trtllm",model_name="m"} 10
# TYPE trtllm_kv_transfer_bytes histogram
trtllm_kv_transfer_bytes_bucket{disaggregation_mode="decode",engine_type="trtllm",model_name="m",le="+Inf"} 10
trtllm_kv_transfer_bytes_sum{disaggregation_mode="decode",engine_type="trtllm",model_name="m"} 5e+08
trtllm_kv_transfer_bytes_count{disaggregation_mode="decode",engine_type="trtllm",model_name="m"} 10
`
	f := mustParse(t, []byte(body))
	ss := mapTRTLLM(f, testMeta(""))
	if len(ss) != 1 || ss[0].Latencies[model.KVTransfer].Sum != 2.5 || ss[0].Counters[model.KVTransferBytes] != 5e8 {
		t.Fatalf("%+v", ss)
	}
	if r, from := pdRole(f); r != model.RoleDecode || !strings.Contains(from, engines.TRTLLMDisaggMode) {
		t.Errorf("role %q from %q", r, from)
	}
}

// SGLang's LoRA pool: the names are its source's; slots used and in all
// read as they are served.
func TestSGLangLoRAPool(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "lora", "sglang-lora-pool-016d8605.py.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{engines.SGLangLoRAUsed, engines.SGLangLoRATotal} {
		if !strings.Contains(string(b), `name="`+n+`"`) {
			t.Errorf("%s not in SGLang's collector", n)
		}
	}
	if !strings.Contains(string(b), "(max_loras_per_batch)") || !strings.Contains(engines.SGLang.Levers.MaxLoRAs, "--max-loras-per-batch") {
		t.Error("the slots are not the flag's")
	}
	body := `# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{engine_type="unified",model_name="m",tp_rank="0"} 20
# TYPE sglang:lora_pool_slots_used gauge
sglang:lora_pool_slots_used{engine_type="unified",model_name="m",tp_rank="0"} 3
# TYPE sglang:lora_pool_slots_total gauge
sglang:lora_pool_slots_total{engine_type="unified",model_name="m",tp_rank="0"} 3
`
	ss := mapSGLang(mustParse(t, []byte(body)), testMeta(""))
	if len(ss) != 1 || ss[0].Gauges[model.LoRASlotsUsed] != 3 || ss[0].Gauges[model.LoRASlotsTotal] != 3 {
		t.Fatalf("%+v", ss)
	}
}
