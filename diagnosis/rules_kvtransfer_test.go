package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// A vLLM prefill instance counts 3 requests whose KV expired before the
// decode side read it (vllm:nixl_num_kv_expired_reqs, on the P instance):
// a finding naming the count, the decode side's state and, last, the
// timeout; a prefill counting none is checked and quiet.
func TestKVTransferExpired(t *testing.T) {
	prefill := func(rate float64) Endpoint {
		p := member("http://p0", model.RolePrefill, 4, 0, 0.3)
		p.State.KVExpiredPS = model.Some(rate)
		p.State.From = map[string]string{string(model.KVExpired): engines.VLLMNixlExpired}
		return p
	}
	_, rep := watch(t, time.Minute, func(int) []Endpoint {
		return []Endpoint{prefill(0.05), member("http://d0", model.RoleDecode, 40, 3, 0.97)}
	})
	f := open(rep, "kv_transfer_expired")
	if f == nil || f.Title != "KV expired on the prefill side before the decode side read it: 3 requests in the window" ||
		!hasEvidence(f, "http://d0: running 40, waiting 3, KV 97") || !hasAction(f, engines.VLLMNixlAbortTimeout) {
		t.Fatalf("%+v", f)
	}
	_, rep = watch(t, time.Minute, func(int) []Endpoint {
		return []Endpoint{prefill(0), member("http://d0", model.RoleDecode, 4, 0, 0.3)}
	})
	if open(rep, "kv_transfer_expired") != nil || !slicesHas(rep.Checked, "no prefill instance lets a request's KV expire") {
		t.Errorf("quiet prefill: %v checked %v", ids(rep.Findings), rep.Checked)
	}
}

func slicesHas(xs []string, prefix string) bool {
	for _, x := range xs {
		if strings.HasPrefix(x, prefix) {
			return true
		}
	}
	return false
}

// A decode instance waits 2.5 s of a 3 s TTFT for its KV, 20 transfers of
// 100 MB a minute: the stall says the rate the KV moved at (vLLM's own
// throughput: bytes over the transfers' time, here 40 MB/s: a TCP path,
// not RDMA).
func TestKVTransferStallSaysTheBandwidth(t *testing.T) {
	_, rep := watch(t, time.Minute, func(int) []Endpoint {
		d := member("http://d0", model.RoleDecode, 8, 0, 0.4)
		d.State.Latency[model.KVTransfer] = model.Dist{Exposed: true, Mean: model.Some(2.5), Count: 20, Window: time.Minute}
		d.State.Latency[model.TTFT] = dist(2.8, 3.2, 3.5, 3.0)
		d.State.KVBytesPS = model.Some(20 * 100e6 / 60)
		return []Endpoint{d}
	})
	f := open(rep, "kv_transfer_stall")
	if f == nil || !hasEvidence(f, "KV moved at 40 MB/s while transferring (2.0 GB moved in the window") {
		t.Fatalf("%+v", f)
	}
}

// SGLang times its transfers on the sending side (the prefill, from the
// request's entry into its transfer queue): a prefill's 2.5 s transfer
// mean is weighed against the decode side's 3 s TTFT, not its own 0.2 s.
func TestKVTransferStallSGLangPrefillSide(t *testing.T) {
	_, rep := watch(t, time.Minute, func(int) []Endpoint {
		p := member("http://p0", model.RolePrefill, 4, 0, 0.3)
		p.State.Latency[model.KVTransfer] = model.Dist{Exposed: true, Mean: model.Some(2.5), Count: 20, Window: time.Minute}
		p.State.Latency[model.TTFT] = dist(0.15, 0.2, 0.3, 0.2)
		d := member("http://d0", model.RoleDecode, 8, 0, 0.4)
		d.State.Latency[model.TTFT] = dist(2.8, 3.2, 3.5, 3.0)
		d.State.TransferQ = model.Some(6)
		return []Endpoint{p, d}
	})
	f := open(rep, "kv_transfer_stall")
	if f == nil || f.Endpoint != "http://p0" || !strings.Contains(f.Title, "of the decode side's TTFT (2.5 s of 3.0 s)") ||
		!hasEvidence(f, "http://d0: 6 requests poll for their KV (transfer queue)") {
		t.Fatalf("%+v", f)
	}
}

// SGLang's decode side holds the requests it has no KV space to receive
// into in its prealloc queue (KV reading 50 %, nothing waiting): the
// decode pool is the bottleneck, and the evidence says the queue.
func TestPDImbalanceDecodePreallocQueue(t *testing.T) {
	_, rep := watch(t, time.Minute, func(int) []Endpoint {
		var eps []Endpoint
		for _, u := range []string{"http://p0", "http://p1"} {
			eps = append(eps, member(u, model.RolePrefill, 3, 0, 0.2))
		}
		for _, u := range []string{"http://d0", "http://d1"} {
			d := member(u, model.RoleDecode, 30, 0, 0.5)
			d.State.PreallocQ = model.Some(6)
			d.State.From = map[string]string{string(model.PDPreallocQueue): engines.SGLangPreallocQueue}
			eps = append(eps, d)
		}
		return eps
	})
	f := open(rep, "pd_imbalance")
	if f == nil || !strings.HasPrefix(f.Title, "decode-starved") || !hasEvidence(f, "http://d0: 6 requests wait for KV space to receive into (prealloc queue)") {
		t.Fatalf("%+v", f)
	}
}
