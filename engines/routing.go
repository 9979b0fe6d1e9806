package engines

import "strings"

// The levers of a router in front of engines, as the routing findings name
// them (SERVING-LAYERS.md §5): each router's own knob, by layer.

// RouteHealth is where the router in front of idle workers says which
// workers it routes to: ly's own word (its WorkerCheck) where llmtop knows
// which router that is, each router's otherwise.
func RouteHealth(ly *Layer) string {
	if ly != nil && ly.WorkerCheck != "" {
		return "the " + ly.Name + "'s " + ly.WorkerCheck
	}
	var each []string
	for _, l := range layers {
		if l.WorkerCheck != "" {
			each = append(each, l.Name+"'s "+l.WorkerCheck)
		}
	}
	return "the worker list and health of the router in front of the idle workers (" + strings.Join(each, "; ") + ")"
}

// RouteBalanceOf is ly's own setting for weighing load over cache overlap
// (its BalanceLever), or each router's where ly is unknown or names none.
func RouteBalanceOf(ly *Layer) string {
	if ly != nil && ly.BalanceLever != "" {
		return ly.BalanceLever
	}
	var each []string
	for _, l := range layers {
		if l.BalanceLever != "" {
			each = append(each, l.BalanceLever)
		}
	}
	return "weigh load over cache overlap in the router in front (" + strings.Join(each, "; ") + ")"
}

// RouteLoadSignal is where a router's load signal can be read per worker.
const RouteLoadSignal = "the router's per-worker load signal (SGLang gateway: smg_worker_requests_active{worker}; vllm-router: vllm_router_worker_load{worker}; " +
	"Dynamo: dynamo_frontend_worker_active_prefill_tokens): a signal that reads 0 for every worker sends every request to the first"

// RoutePrefillQueue routes prefill by queue depth.
const RoutePrefillQueue = "route prefill by queue depth (llm-d: a queue-size scorer on the prefill profile; Dynamo: the KV router's prefill load; " +
	"SGLang gateway: --policy power_of_two or cache_aware with balance thresholds)"

// KVTransferCheck is where a stalled KV hand-over is read.
const KVTransferCheck = "the KV transfer path between prefill and decode (NIXL: UCX_TLS names an RDMA transport, not tcp only; failed transfers in " +
	VLLMNixlFailed + "; SGLang: " + SGLangTransferFail + " and " + SGLangTransferQueue + ")"

// RouteDeadBackend is where a router's backends are listed and checked.
const RouteDeadBackend = "the router's backends (production-stack: --static-backends or its service discovery, and its health checks; " +
	"vllm-router: its worker list and circuit-breaker settings; " +
	"a session or prefix affinity keeps sending to a backend until it is removed)"

// RouteQueueThreshold is the knob that makes a router hold requests back.
const RouteQueueThreshold = "the router's queue threshold (Dynamo: --router-queue-threshold; its pending queue is " +
	DynamoRouterPending + ")"
