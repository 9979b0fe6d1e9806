package bench

import (
	"bufio"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sources/bench/report"
)

func TestParseChunks(t *testing.T) {
	cases := []struct {
		api  API
		in   string
		want chunk
	}{
		{Chat, `{"choices":[{"delta":{"role":"assistant","content":""},"finish_reason":null}]}`, chunk{}},
		{Chat, `{"choices":[{"delta":{"content":"Hi"},"finish_reason":null}]}`, chunk{content: true, text: []byte("Hi")}},
		{Chat, `{"choices":[{"delta":{"reasoning_content":"hmm"}}]}`, chunk{content: true, reasoning: true}},
		{Chat, `{"choices":[{"delta":{"content":null,"reasoning":"so"}}]}`, chunk{content: true, reasoning: true}},
		// logprobs.content is an array: not text.
		{Chat, `{"choices":[{"delta":{"content":""},"logprobs":{"content":[{"token":"x"}]}}]}`, chunk{}},
		// A key-like sequence inside a string value is not a key.
		{Chat, `{"choices":[{"delta":{"role":"\"content\":\"x"}}]}`, chunk{}},
		{Chat, `{"choices":[{"delta":{"content":"\\"},"finish_reason":"stop"}]}`, chunk{content: true, text: []byte(`\\`), finish: true, reason: []byte("stop")}},
		{Chat, `{"choices":[],"usage":{"prompt_tokens":12,"total_tokens":40,"completion_tokens":28}}`, chunk{usage: true, prompt: 12, output: 28}},
		{Chat, `{"choices":[],"usage":null}`, chunk{}},
		{Chat, `{"error":{"message":"oom"}}`, chunk{err: true}},
		{Chat, `{"choices":[{"delta":{"content":"a"}}],"error":null}`, chunk{content: true, text: []byte("a")}},
		{Completions, `{"choices":[{"text":" the","finish_reason":null}]}`, chunk{content: true, text: []byte(" the")}},
		{Completions, `{"choices":[{"text":"","finish_reason":"length"}]}`, chunk{finish: true, reason: []byte("length")}},
		{OllamaGenerate, `{"response":"Hi","done":false}`, chunk{content: true, text: []byte("Hi")}},
		{OllamaGenerate, `{"response":"","done":true,"prompt_eval_count":26,"eval_count":290}`, chunk{finish: true, usage: true, prompt: 26, output: 290}},
		{OllamaGenerate, `{"response":"","done":true,"done_reason":"length","prompt_eval_count":26,"eval_count":290}`, chunk{finish: true, reason: []byte("length"), usage: true, prompt: 26, output: 290}},
		// Ollama's OpenAI-compatible stream has no done_reason; an NDJSON one has no finish_reason.
		{OllamaChat, `{"message":{"role":"assistant","content":""},"finish_reason":"stop","done":false}`, chunk{}},
		{OllamaChat, `{"message":{"role":"assistant","content":"Hi"},"done":false}`, chunk{content: true, text: []byte("Hi")}},
		{OllamaChat, `{"message":{"role":"assistant","thinking":"…"},"done":false}`, chunk{content: true, reasoning: true}},
		{OllamaChat, `{"error":"model not found"}`, chunk{err: true}},
	}
	for _, c := range cases {
		got := c.api.parse([]byte(c.in))
		got.id = nil
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %s:\n got %+v\nwant %+v", c.api, c.in, got, c.want)
		}
	}
}

func TestResponseID(t *testing.T) {
	c := Chat.parse([]byte(`{"id":"chatcmpl-7f","choices":[{"delta":{"tool_calls":[{"id":"call_1"}]}}]}`))
	if string(c.id) != "chatcmpl-7f" {
		t.Errorf("id %q", c.id)
	}
}

func TestStreamLines(t *testing.T) {
	long := strings.Repeat("x", 3*readBuf)
	in := "data: {\"choices\":[{\"delta\":{\"content\":\"" + long + "\"}}]}\r\n\r\n" +
		": keep-alive\n" + "event: message\n" + "id: 7\n" +
		"data:{\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: [DONE]\n\n"
	lr := lineReader{br: bufio.NewReaderSize(strings.NewReader(in), 4096)}
	rec := report.Record{Start: time.Now()}
	st := streamState{api: Chat, rec: &rec}
	for {
		line, err := lr.next()
		if err != nil {
			break
		}
		if kind, d := st.line(line, time.Now()); kind != report.ErrNone {
			t.Fatalf("%s: %s", kind, d)
		}
	}
	if rec.Chunks != 2 || len(rec.ITL) != 1 || !st.done || rec.ResponseID != "" {
		t.Fatalf("chunks %d itl %d done %v", rec.Chunks, len(rec.ITL), st.done)
	}
	// An SSE error event fails the request even when its payload looks fine.
	st = streamState{api: Chat, rec: &report.Record{}}
	st.line([]byte("event: error"), time.Now())
	if kind, _ := st.line([]byte(`data: {"message":"overloaded"}`), time.Now()); kind != report.ErrStream {
		t.Errorf("error event: %q", kind)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"": 0, "3": 3 * time.Second, " 0 ": 0, "soon": 0,
		"Sun, 22 Nov 2026 05:00:10 GMT": 10 * time.Second,
	} {
		if got := retryAfter(in, now); got != want {
			t.Errorf("Retry-After %q = %v, want %v", in, got, want)
		}
	}
}

func TestWellFormed(t *testing.T) {
	for in, want := range map[string]bool{
		`{"a":1}`:                       true,
		`{"a":"}"}`:                     true,
		`{"a":"\"}"}`:                   true,
		`{"a":[{"b":{}}]} `:             true,
		`{"a":1`:                        false,
		`{"a":"x`:                       false,
		`{"a":1}}`:                      false,
		`{"a":1}{"b":2}`:                false,
		`[1]`:                           false,
		``:                              false,
		`{"choices":[{"delta":{"c":"a"`: false,
	} {
		if got := wellFormed([]byte(in)); got != want {
			t.Errorf("wellFormed(%s) = %v", in, got)
		}
	}
}
