package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func post(t *testing.T, url, body string) (*http.Response, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: body %q is not JSON: %v", url, b, err)
	}
	return resp, v
}

func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&v)
	return resp.StatusCode, v
}

// drive advances the fake clock in small steps until stop is closed.
func drive(s *Sim, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
			_ = s.Advance(5 * time.Millisecond)
			time.Sleep(50 * time.Microsecond)
		}
	}
}

func TestInfoEndpoints(t *testing.T) {
	s := newDriven(t, Config{MaxModelLen: 8192})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	code, v := getJSON(t, srv.URL+"/v1/models")
	data := v["data"].([]any)[0].(map[string]any)
	if code != 200 || data["owned_by"] != "vllm" || data["max_model_len"] != 8192.0 || data["id"] != "meta-llama/Llama-3.1-8B-Instruct" {
		t.Errorf("/v1/models = %d %v", code, v)
	}
	code, v = getJSON(t, srv.URL+"/version")
	if code != 200 || v["version"] != Version || v["simulated"] != true {
		t.Errorf("/version = %d %v", code, v)
	}
	code, v = getJSON(t, srv.URL+"/load")
	if code != 200 || v["server_load"] != 0.0 {
		t.Errorf("/load = %d %v", code, v)
	}
	resp, err := http.Get(srv.URL + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("/health = %v %v", resp, err)
	}
	code, v = getJSON(t, srv.URL+"/nope")
	if code != 404 || v["detail"] != "Not Found" {
		t.Errorf("/nope = %d %v", code, v)
	}
}

func TestBadInput(t *testing.T) {
	s := newDriven(t, Config{MaxModelLen: 4096})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	long := strings.Repeat("word ", 4000) // ~5000 tokens
	cases := []struct {
		name, path, body string
		code             int
		typ, msg         string
	}{
		{"malformed JSON", "/v1/chat/completions", `{"messages": [`, 400, "BadRequestError", "JSON decode error"},
		{"unknown model", "/v1/completions", `{"model":"gpt-9","prompt":"hi"}`, 404, "NotFoundError", "The model `gpt-9` does not exist."},
		{"prompt over max-model-len", "/v1/completions", `{"prompt":"` + long + `","max_tokens":10}`, 400, "BadRequestError", "This model's maximum context length is 4096 tokens. However, you requested 10 output tokens and your prompt contains 5000 input tokens, for a total of 5010 tokens."},
		{"prompt plus max_tokens over", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":5000}`, 400, "BadRequestError", "maximum context length is 4096 tokens"},
		{"max_tokens 0", "/v1/completions", `{"prompt":"hi","max_tokens":0}`, 400, "BadRequestError", "max_tokens must be at least 1, got 0."},
		{"max_tokens negative", "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":-5}`, 400, "BadRequestError", "max_tokens must be at least 1, got -5."},
		{"no messages", "/v1/chat/completions", `{"model":"meta-llama/Llama-3.1-8B-Instruct"}`, 400, "BadRequestError", "messages: Field required"},
		{"min over max", "/v1/completions", `{"prompt":"hi","max_tokens":5,"min_tokens":9}`, 400, "BadRequestError", "min_tokens must be less than or equal to max_tokens=5, got 9."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, v := post(t, srv.URL+c.path, c.body)
			e, _ := v["error"].(map[string]any)
			if resp.StatusCode != c.code || e == nil || e["type"] != c.typ || e["code"] != float64(c.code) || !strings.Contains(e["message"].(string), c.msg) {
				t.Errorf("got %d %v, want %d %s %q", resp.StatusCode, v, c.code, c.typ, c.msg)
			}
		})
	}
	if n := value(families(t, s), "vllm:request_success_total", "", ""); n != 0 {
		t.Errorf("rejected requests reached the engine: %v finished", n)
	}
}

// sse reads an SSE body into its data payloads.
func sse(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

func TestStreamingChatShape(t *testing.T) {
	s := newDriven(t, Config{})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	stop := make(chan struct{})
	go drive(s, stop)
	defer close(stop)
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(
		`{"model":"meta-llama/Llama-3.1-8B-Instruct","messages":[{"role":"user","content":"Say something long."}],"max_tokens":12,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("content type %q", ct)
	}
	events := sse(t, resp.Body)
	if len(events) != 1+12+1+1 {
		t.Fatalf("%d events, want role + 12 tokens + usage + [DONE]: %v", len(events), events)
	}
	var first struct {
		ID      string
		Object  string
		Choices []struct {
			Delta map[string]any
		}
	}
	_ = json.Unmarshal([]byte(events[0]), &first)
	if first.Object != "chat.completion.chunk" || first.Choices[0].Delta["role"] != "assistant" || !strings.HasPrefix(first.ID, "chatcmpl-") {
		t.Errorf("first chunk %s", events[0])
	}
	var last struct {
		Choices []struct {
			Delta        map[string]any
			FinishReason *string `json:"finish_reason"`
		}
	}
	_ = json.Unmarshal([]byte(events[12]), &last)
	if last.Choices[0].FinishReason == nil || *last.Choices[0].FinishReason != "length" || last.Choices[0].Delta["content"] == "" {
		t.Errorf("last token chunk %s", events[12])
	}
	var usage struct {
		Choices []any
		Usage   usageJSON
	}
	_ = json.Unmarshal([]byte(events[13]), &usage)
	if len(usage.Choices) != 0 || usage.Usage.CompletionTokens != 12 || usage.Usage.TotalTokens != usage.Usage.PromptTokens+12 {
		t.Errorf("usage chunk %s", events[13])
	}
	if events[14] != "[DONE]" {
		t.Errorf("last event %q", events[14])
	}
}

func TestNonStreamingCompletionAndMinTokens(t *testing.T) {
	s := newDriven(t, Config{Seed: 3})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	stop := make(chan struct{})
	go drive(s, stop)
	defer close(stop)
	for i := 0; i < 5; i++ {
		resp, v := post(t, srv.URL+"/v1/completions", `{"prompt":"Once upon a time","max_tokens":400,"min_tokens":300}`)
		ch := v["choices"].([]any)[0].(map[string]any)
		u := v["usage"].(map[string]any)
		if resp.StatusCode != 200 || v["object"] != "text_completion" || u["completion_tokens"].(float64) < 300 || ch["text"] == "" {
			t.Fatalf("completion %d %v", resp.StatusCode, v)
		}
		fin := ch["finish_reason"]
		if (fin == "length") != (u["completion_tokens"] == 400.0) || (fin != "length" && fin != "stop") {
			t.Errorf("finish_reason %v with %v tokens", fin, u["completion_tokens"])
		}
	}
}

// A client that goes away mid-stream aborts its request: counted "abort",
// its KV freed.
func TestClientDisconnectAborts(t *testing.T) {
	s := newDriven(t, Config{})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	stop := make(chan struct{})
	go drive(s, stop)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/completions", strings.NewReader(`{"prompt":"`+strings.Repeat("x", 4000)+`","max_tokens":2000,"ignore_eos":true,"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for n := 0; n < 5; { // read a few tokens
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			n++
		}
	}
	if kv := value(families(t, s), "vllm:kv_cache_usage_perc", "", ""); kv <= 0 {
		t.Errorf("KV usage %v while streaming", kv)
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for value(families(t, s), "vllm:request_success_total", "finished_reason", "abort") != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	f := families(t, s)
	if a := value(f, "vllm:request_success_total", "finished_reason", "abort"); a != 1 {
		t.Errorf("abort count %v, want 1", a)
	}
	if kv, run := value(f, "vllm:kv_cache_usage_perc", "", ""), value(f, "vllm:num_requests_running", "", ""); kv != 0 || run != 0 {
		t.Errorf("after abort: KV usage %v, running %v; want 0, 0", kv, run)
	}
}

// Many clients at once: the queue grows, the sim starts no goroutines of
// its own per request, and everything is released when they leave.
func TestManyConcurrentConnections(t *testing.T) {
	const n = 1000
	s := newDriven(t, Config{MaxNumSeqs: 64})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	tr := &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: n}
	client := &http.Client{Transport: tr}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/completions", strings.NewReader(`{"prompt":"hello there","max_tokens":100000,"ignore_eos":true,"stream":true}`))
			if resp, err := client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		f := families(t, s)
		if value(f, "vllm:num_requests_waiting", "", "")+value(f, "vllm:num_requests_running", "", "") == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %v waiting + %v running of %d", value(f, "vllm:num_requests_waiting", "", ""), value(f, "vllm:num_requests_running", "", ""), n)
		}
		_ = s.Advance(10 * time.Millisecond)
		time.Sleep(time.Millisecond)
	}
	// All have arrived; the scheduler admits them over its next steps (a
	// step admits what its token budget allows), so give it virtual time
	// rather than wall time: on a busy machine the last arrival can come
	// while only some of the first are admitted.
	f := families(t, s)
	for step := 0; step < 3000 && value(f, "vllm:num_requests_running", "", "") < 64; step++ {
		_ = s.Advance(10 * time.Millisecond)
		f = families(t, s)
	}
	if r := value(f, "vllm:num_requests_running", "", ""); r != 64 {
		t.Errorf("running %v after 30 s of virtual time, want --max-num-seqs 64", r)
	}
	cancel()
	wg.Wait()
	deadline = time.Now().Add(30 * time.Second)
	for value(families(t, s), "vllm:request_success_total", "finished_reason", "abort") != n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	f = families(t, s)
	if a, kv := value(f, "vllm:request_success_total", "finished_reason", "abort"), value(f, "vllm:kv_cache_usage_perc", "", ""); a != n || kv != 0 {
		t.Errorf("after all left: %v aborted (want %d), KV usage %v (want 0)", a, n, kv)
	}
	tr.CloseIdleConnections()
}

// A request queued while a step runs shows in the gauges at once, not only
// after the step.
func TestQueuedRequestShowsImmediately(t *testing.T) {
	s := newDriven(t, Config{})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := 0; i < 3; i++ {
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/completions", strings.NewReader(`{"prompt":"hi","max_tokens":50,"stream":true}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
	}
	f := families(t, s) // the clock has not moved: one step in flight, two queued
	if r, w := value(f, "vllm:num_requests_running", "", ""), value(f, "vllm:num_requests_waiting", "", ""); r != 1 || w != 2 {
		t.Errorf("running %v waiting %v, want 1 and 2", r, w)
	}
}
