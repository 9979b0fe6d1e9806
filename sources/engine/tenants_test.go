package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/llmtop/llmtop/engines"
	"github.com/llmtop/llmtop/model"
)

// The lines LiteLLM's own end-to-end test asserts a proxy serves after one
// failed request with the master key (testdata/routers): a proxy, never an
// engine; no team and no key alias ("None"), so its tenant is the user
// LiteLLM names, default_user_id: 1 request, 1 failed; no tokens counted.
func TestLiteLLMTenantsFromItsOwnTestLines(t *testing.T) {
	body := routerFile(t, "litellm-otel-tests-lines.txt")
	sc := ScrapeOnce(context.Background(), Config{URL: serveLayer(t, body, "").URL})
	checkLayerScrape(t, sc, &engines.LiteLLM)
	ts := sc.Identity.Tenants
	want := model.Tenant{Kind: "user", Name: "default_user_id", Requests: 1, Failed: 1}
	if len(ts) != 1 || ts[0] != want {
		t.Fatalf("tenants %+v, want %+v", ts, want)
	}
	if d := sc.Identity.LayerDetail; d != "by user since start: default_user_id 1 req (1 failed)" {
		t.Errorf("detail %q", d)
	}
}

// Teams win over keys and users, named by their alias where they have one
// (the label sets as LiteLLM writes them; two teams and the master key's
// unteamed requests, which name no team and are left out of the team
// view); a proxy whose requests carry no tenant label says "no tenant
// source" and lists none.
func TestLiteLLMTenantsByTeam(t *testing.T) {
	body := []byte(`# TYPE litellm_proxy_total_requests_metric_total counter
litellm_proxy_total_requests_metric_total{api_key_alias="None",hashed_api_key="aa",requested_model="m",status_code="200",team="t-1",team_alias="search",user="u1"} 40
litellm_proxy_total_requests_metric_total{api_key_alias="None",hashed_api_key="aa",requested_model="m",status_code="500",team="t-1",team_alias="search",user="u1"} 2
litellm_proxy_total_requests_metric_total{api_key_alias="None",hashed_api_key="bb",requested_model="m",status_code="200",team="t-2",team_alias="None",user="u2"} 7
litellm_proxy_total_requests_metric_total{api_key_alias="None",hashed_api_key="cc",requested_model="m",status_code="200",team="None",team_alias="None",user="default_user_id"} 3
# TYPE litellm_proxy_failed_requests_metric_total counter
litellm_proxy_failed_requests_metric_total{api_key_alias="None",exception_status="500",hashed_api_key="aa",requested_model="m",team="t-1",team_alias="search",user="u1"} 2
# TYPE litellm_total_tokens_metric_total counter
litellm_total_tokens_metric_total{api_key_alias="None",hashed_api_key="aa",model="m",team="t-1",team_alias="search",user="u1"} 12000
litellm_total_tokens_metric_total{api_key_alias="None",hashed_api_key="bb",model="m",team="t-2",team_alias="None",user="u2"} 900
`)
	r := classifyRole(mustParse(t, body))
	ts := tenants(r)
	want := []model.Tenant{
		{Kind: "team", Name: "search", Requests: 42, Failed: 2, Tokens: 12000, TokensOK: true},
		{Kind: "team", Name: "t-2", Requests: 7, Tokens: 900, TokensOK: true},
	}
	if len(ts) != len(want) || ts[0] != want[0] || ts[1] != want[1] {
		t.Fatalf("tenants %+v, want %+v", ts, want)
	}
	if d := layerDetail(r); d != "by team since start: search 42 req (2 failed), 12000 tok; t-2 7 req, 900 tok; 3 req with no team" {
		t.Errorf("detail %q", d)
	}
	bare := []byte(`# TYPE litellm_proxy_total_requests_metric_total counter
litellm_proxy_total_requests_metric_total{requested_model="m",status_code="200"} 10
`)
	r = classifyRole(mustParse(t, bare))
	if ts := tenants(r); ts != nil {
		t.Errorf("tenants from no tenant label: %+v", ts)
	}
	if d := layerDetail(r); !strings.HasPrefix(d, "no tenant source") {
		t.Errorf("detail %q", d)
	}
}

// A router's own end-to-end TTFT, beside each instance's in the fleet: the
// mean of its histogram since start. Dynamo's frontend: the real capture
// (testdata/routers) has no TTFT histogram, so nothing is said; with one
// in the shape Dynamo writes (two models), 3200+1800 s over 10000+5000
// requests is 333 ms. The picker's twins count once: the deprecated GIE
// histogram beside llm_d_epp_'s is left out (else 2 s, not 1 s).
func TestRouterEndToEndTTFT(t *testing.T) {
	body := routerFile(t, "dynamo-frontend-aiperf.txt")
	if d := layerDetail(classifyRole(mustParse(t, body))); d != "" {
		t.Errorf("detail from a capture without TTFT: %q", d)
	}
	body = append(append([]byte{}, body...), []byte(`# TYPE dynamo_frontend_time_to_first_token_seconds histogram
dynamo_frontend_time_to_first_token_seconds_bucket{model="a",le="+Inf"} 10000
dynamo_frontend_time_to_first_token_seconds_sum{model="a"} 3200
dynamo_frontend_time_to_first_token_seconds_count{model="a"} 10000
dynamo_frontend_time_to_first_token_seconds_bucket{model="b",le="+Inf"} 5000
dynamo_frontend_time_to_first_token_seconds_sum{model="b"} 1800
dynamo_frontend_time_to_first_token_seconds_count{model="b"} 5000
`)...)
	sc := ScrapeOnce(context.Background(), Config{URL: serveLayer(t, body, "").URL})
	if d := sc.Identity.LayerDetail; d != "end-to-end TTFT mean 333 ms over 15000 requests since start" {
		t.Errorf("dynamo detail %q", d)
	}
	picker := []byte(`# TYPE llm_d_epp_request_ttft_seconds histogram
llm_d_epp_request_ttft_seconds_bucket{model_name="m",target_model_name="m",le="+Inf"} 10
llm_d_epp_request_ttft_seconds_sum{model_name="m",target_model_name="m"} 10
llm_d_epp_request_ttft_seconds_count{model_name="m",target_model_name="m"} 10
# TYPE inference_objective_request_ttft_seconds histogram
inference_objective_request_ttft_seconds_bucket{model_name="m",target_model_name="m",le="+Inf"} 10
inference_objective_request_ttft_seconds_sum{model_name="m",target_model_name="m"} 20
inference_objective_request_ttft_seconds_count{model_name="m",target_model_name="m"} 10
`)
	r := classifyRole(mustParse(t, picker))
	if r.Layer != &engines.EndpointPicker {
		t.Fatalf("classified %v", r.Layer)
	}
	if d := layerDetail(r); d != "end-to-end TTFT mean 1.00 s over 10 requests since start" {
		t.Errorf("picker detail %q", d)
	}
}

// llm-d's picker counts requests by fairness_id (the
// x-llm-d-inference-fairness-id header; "default-flow" without it, "other"
// past 1000 ids): its tenants, their failures and tokens (the token
// histograms' sums), the requests with no id said apart; the deprecated
// twin, without fairness_id, counted once.
func TestEndpointPickerTenantsByFairnessID(t *testing.T) {
	body := []byte(`# TYPE llm_d_epp_request_total counter
llm_d_epp_request_total{fairness_id="team-a",model_name="m",priority="0",target_model_name="m"} 40
llm_d_epp_request_total{fairness_id="default-flow",model_name="m",priority="0",target_model_name="m"} 5
llm_d_epp_request_total{fairness_id="other",model_name="m",priority="0",target_model_name="m"} 3
# TYPE inference_objective_request_total counter
inference_objective_request_total{model_name="m",priority="0",target_model_name="m"} 48
# TYPE llm_d_epp_request_error_total counter
llm_d_epp_request_error_total{error_code="BadRequest",fairness_id="team-a",model_name="m",priority="0",target_model_name="m"} 2
# TYPE llm_d_epp_request_input_tokens histogram
llm_d_epp_request_input_tokens_bucket{fairness_id="team-a",model_name="m",priority="0",target_model_name="m",le="+Inf"} 40
llm_d_epp_request_input_tokens_sum{fairness_id="team-a",model_name="m",priority="0",target_model_name="m"} 10000
llm_d_epp_request_input_tokens_count{fairness_id="team-a",model_name="m",priority="0",target_model_name="m"} 40
# TYPE llm_d_epp_request_output_tokens histogram
llm_d_epp_request_output_tokens_bucket{fairness_id="team-a",model_name="m",priority="0",target_model_name="m",le="+Inf"} 40
llm_d_epp_request_output_tokens_sum{fairness_id="team-a",model_name="m",priority="0",target_model_name="m"} 2000
llm_d_epp_request_output_tokens_count{fairness_id="team-a",model_name="m",priority="0",target_model_name="m"} 40
`)
	r := classifyRole(mustParse(t, body))
	if r.Layer != &engines.EndpointPicker {
		t.Fatalf("classified %v", r.Layer)
	}
	ts := tenants(r)
	if len(ts) != 2 || ts[0].Name != "team-a" || ts[0].Kind != "fairness id" || ts[0].Requests != 40 || ts[0].Failed != 2 || ts[0].Tokens != 12000 {
		t.Fatalf("tenants %+v", ts)
	}
	want := "by fairness id since start: team-a 40 req (2 failed), 12000 tok; other (past the layer's cap on distinct fairness ids) 3 req; 5 req with no fairness id"
	if d := layerDetail(r); d != want {
		t.Errorf("detail %q\nwant   %q", d, want)
	}
	// Every request default-flow: no tenant source, and it says why.
	only := []byte(`# TYPE llm_d_epp_request_total counter
llm_d_epp_request_total{fairness_id="default-flow",model_name="m",priority="0",target_model_name="m"} 5
`)
	if d := layerDetail(classifyRole(mustParse(t, only))); !strings.HasPrefix(d, "no tenant source (its requests carry no x-llm-d-inference-fairness-id header") {
		t.Errorf("detail %q", d)
	}
}
