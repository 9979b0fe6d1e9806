package sim

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// clientTiming streams one chat request and returns its id, the client's
// TTFT (send → first chunk with content) and its inter-token gaps.
func clientTiming(t *testing.T, url string) (string, time.Duration, []time.Duration) {
	t.Helper()
	body := `{"messages":[{"role":"user","content":"time me"}],"max_tokens":40,"ignore_eos":true,"stream":true}`
	start := time.Now()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var id string
	var arrivals []time.Time
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		at := time.Now()
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || d == "[DONE]" {
			continue
		}
		var c struct {
			ID      string
			Choices []struct{ Delta struct{ Content string } }
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatal(err)
		}
		id = c.ID
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
			arrivals = append(arrivals, at)
		}
	}
	var gaps []time.Duration
	for i := 1; i < len(arrivals); i++ {
		gaps = append(gaps, arrivals[i].Sub(arrivals[i-1]))
	}
	return id, arrivals[0].Sub(start), gaps
}

// On loopback, the TTFT and every inter-token gap a streaming client sees
// match the sim's own record to within a millisecond. The machine running
// the tests is shared, so the best of three runs counts.
func TestClientSeesSimTiming(t *testing.T) {
	s, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.Start(ctx)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	if resp, err := http.Get(srv.URL + "/health"); err == nil { // open the connection first
		resp.Body.Close()
	}
	best := time.Hour
	for run := 0; run < 3 && best >= time.Millisecond; run++ {
		id, ttft, gaps := clientTiming(t, srv.URL)
		arrival, tokens, ok := s.TokenTimes(id)
		if !ok || len(tokens) != 40 || len(gaps) != 39 {
			t.Fatalf("record for %s: ok=%v, %d tokens, client saw %d gaps", id, ok, len(tokens), len(gaps))
		}
		worst := abs(ttft - tokens[0].Sub(arrival))
		for i, g := range gaps {
			worst = max(worst, abs(g-tokens[i+1].Sub(tokens[i])))
		}
		t.Logf("run %d: client TTFT %v vs sim %v; worst |client − sim| over TTFT and 39 gaps: %v", run, ttft, tokens[0].Sub(arrival), worst)
		best = min(best, worst)
	}
	if best >= time.Millisecond {
		t.Errorf("client timing differs from the sim's record by %v, want < 1ms", best)
	}
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
