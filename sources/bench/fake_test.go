package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeEngine is a streaming server whose true emit times are known: it
// records when each content chunk was flushed, per X-Request-Id. Its
// behaviour is chosen by mode, to exercise every bad answer.
type fakeEngine struct {
	mode    string        // "" normal; see ServeHTTP for the others
	tokens  int           // content chunks per answer (default 8)
	first   time.Duration // delay before the first content chunk
	gap     time.Duration // delay between content chunks
	status  int           // for mode "status"
	noUsage bool
	// roleDelay sends the role-only chunk first, this long before content.
	roleDelay time.Duration
	// refuseExtras answers 400 to bodies carrying ignore_eos.
	refuseExtras bool
	// slots, when set, is a batch of this many: further requests queue.
	slots chan struct{}
	// noRecord skips keeping flush times (long capacity runs).
	noRecord bool

	mu       sync.Mutex
	flushes  map[string][]time.Time
	arrivals map[string]time.Time // when each request's handler began (recording servers)
	inFlight int
	peak     int
	requests int
	lastBody []byte
}

func newFake(t testing.TB, f *fakeEngine) *httptest.Server {
	if f.tokens == 0 {
		f.tokens = 8
	}
	f.flushes = map[string][]time.Time{}
	s := httptest.NewServer(f)
	t.Cleanup(s.Close)
	return s
}

var (
	sseRole   = []byte("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n")
	sseTok    = []byte("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" tok\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n")
	sseCmpTok = []byte("data: {\"id\":\"c1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\" tok\",\"finish_reason\":null}]}\n\n")
	sseFinish = []byte("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":\"length\"}]}\n\n")
	sseDone   = []byte("data: [DONE]\n\n")
)

func sseUsage(prompt, out int) []byte {
	return fmt.Appendf(nil, "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"total_tokens\":%d,\"completion_tokens\":%d}}\n\n", prompt, prompt+out, out)
}

func (f *fakeEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		io.WriteString(w, `{"object":"list","data":[{"id":"fake-model","object":"model"}]}`)
		return
	case "/debug/flushes":
		f.mu.Lock()
		m := make(map[string][]int64, len(f.flushes))
		for id, ts := range f.flushes {
			for _, t := range ts {
				m[id] = append(m[id], t.UnixNano())
			}
		}
		f.flushes = map[string][]time.Time{}
		f.mu.Unlock()
		json.NewEncoder(w).Encode(m)
		return
	case "/debug/arrivals":
		f.mu.Lock()
		m := make(map[string]int64, len(f.arrivals))
		for id, t := range f.arrivals {
			m[id] = t.UnixNano()
		}
		f.arrivals = nil
		f.mu.Unlock()
		json.NewEncoder(w).Encode(m)
		return
	case "/api/tags":
		io.WriteString(w, `{"models":[{"name":"llama3:8b","model":"llama3:8b"}]}`)
		return
	}
	arrived := time.Now()
	body, _ := io.ReadAll(r.Body)
	id := r.Header.Get("X-Request-Id")
	f.mu.Lock()
	if !f.noRecord {
		if f.arrivals == nil {
			f.arrivals = map[string]time.Time{}
		}
		f.arrivals[id] = arrived
	}
	f.requests++
	f.lastBody = body
	f.inFlight++
	f.peak = max(f.peak, f.inFlight)
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.inFlight--; f.mu.Unlock() }()

	if f.refuseExtras && bytes.Contains(body, []byte("ignore_eos")) {
		http.Error(w, `{"error":"unknown field ignore_eos"}`, http.StatusBadRequest)
		return
	}
	switch f.mode {
	case "status":
		http.Error(w, `{"error":"boom"}`, f.status)
		return
	case "429":
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"error":"slow down"}`, http.StatusTooManyRequests)
		return
	case "hang":
		<-r.Context().Done()
		return
	case "endless": // a stream that never ends: a token every 20 ms until the client goes
		w.Header().Set("Content-Type", "text/event-stream")
		for {
			w.Write(sseTok)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	if f.slots != nil {
		select {
		case f.slots <- struct{}{}:
			defer func() { <-f.slots }()
		case <-r.Context().Done():
			return
		}
	}
	fl := w.(http.Flusher)
	ndjson := strings.HasPrefix(r.URL.Path, "/api/")
	if ndjson {
		w.Header().Set("Content-Type", "application/x-ndjson")
	} else {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	if f.roleDelay > 0 {
		w.Write(sseRole)
		fl.Flush()
		time.Sleep(f.roleDelay)
	}
	sleep(f.first)
	times := make([]time.Time, 0, f.tokens)
	for k := 0; k < f.tokens; k++ {
		if k > 0 {
			sleep(f.gap)
		}
		switch {
		case f.mode == "midclose" && k == 3:
			panic(http.ErrAbortHandler) // drops the connection mid-stream
		case f.mode == "cleanclose" && k == 3:
			f.keep(id, times)
			return // ends the body cleanly, without [DONE]
		case f.mode == "malformed" && k == 2:
			io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"\n\n")
		case f.mode == "garbage" && k == 2:
			io.WriteString(w, "<html>proxy error</html>\n")
		case f.mode == "errobj" && k == 2:
			io.WriteString(w, "data: {\"error\":{\"message\":\"out of memory\",\"code\":500}}\n\n")
		case f.mode == "echo" || f.mode == "blank":
			writePiece(w, r.URL.Path, f.piece(k, body))
		case r.URL.Path == "/api/generate":
			io.WriteString(w, `{"model":"llama3:8b","response":" tok","done":false}`+"\n")
		case r.URL.Path == "/api/chat":
			io.WriteString(w, `{"model":"llama3:8b","message":{"role":"assistant","content":" tok"},"done":false}`+"\n")
		case r.URL.Path == "/v1/completions":
			w.Write(sseCmpTok)
		default:
			w.Write(sseTok)
		}
		fl.Flush()
		if !f.noRecord {
			times = append(times, time.Now())
		}
	}
	f.keep(id, times)
	if ndjson {
		fmt.Fprintf(w, `{"model":"llama3:8b","response":"","done":true,"prompt_eval_count":%d,"eval_count":%d}`+"\n", 11, f.tokens)
		return
	}
	w.Write(sseFinish)
	if !f.noUsage {
		w.Write(sseUsage(11, f.tokens))
	}
	w.Write(sseDone)
}

// piece is content chunk k's text in the modes that answer with text:
// "echo" sends the prompt's words back, "blank" a newline.
func (f *fakeEngine) piece(k int, body []byte) string {
	if f.mode == "blank" {
		return "\n"
	}
	var req struct {
		Prompt   string `json:"prompt"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(body, &req)
	if len(req.Messages) > 0 {
		req.Prompt = req.Messages[0].Content
	}
	w := strings.Fields(req.Prompt)
	if len(w) == 0 {
		return " ?"
	}
	return " " + w[k%len(w)]
}

// writePiece writes one content chunk carrying text in path's protocol.
func writePiece(w io.Writer, path, text string) {
	t, _ := json.Marshal(text)
	switch path {
	case "/api/generate":
		fmt.Fprintf(w, `{"model":"llama3:8b","response":%s,"done":false}`+"\n", t)
	case "/api/chat":
		fmt.Fprintf(w, `{"model":"llama3:8b","message":{"role":"assistant","content":%s},"done":false}`+"\n", t)
	case "/v1/completions":
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"text\":%s,\"finish_reason\":null}]}\n\n", t)
	default:
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n", t)
	}
}

func (f *fakeEngine) keep(id string, times []time.Time) {
	if f.noRecord {
		return
	}
	f.mu.Lock()
	f.flushes[id] = times
	f.mu.Unlock()
}

func (f *fakeEngine) flushTimes(index int) []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.flushes["llmtop-bench-"+strconv.Itoa(index)]
}

// sleep waits d (zero: not at all).
func sleep(d time.Duration) {
	if d > 0 {
		time.Sleep(d)
	}
}
