package bench

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sources/bench/report"
)

// The SSE transcripts in testdata/engines were recorded from real engines
// by test/engines (LLMTOP_RECORD_FIXTURES=1); their first lines are SSE
// comments (":") naming the engine, which the stream reader skips as it
// skips keep-alives. Every expected value below was counted by hand from
// the files: 1-based file line numbers, the data events in between are
// separated by blank lines.
var realTranscripts = []struct {
	file string
	id   string
	// Line numbers: the first and last content chunks, the chunk with a
	// non-null finish_reason, and the usage chunk.
	firstLine, lastLine, finishLine, usageLine int
	chunks                                     int // content chunks
	prompt, output                             int // usage.prompt_tokens, usage.completion_tokens
	text                                       string
}{
	{
		// llama-server b1-de3ff81, max_tokens 8. Line 4 is the role-only
		// chunk ("content":null): not a token. Lines 6..20 carry " yo" … " F"
		// (8 chunks), line 22 is finish_reason "length" with an empty delta,
		// line 24 the usage chunk: prompt_tokens 24, completion_tokens 8,
		// prompt_tokens_details.cached_tokens 6, and llama.cpp's timings
		// (prompt_n 18 = 24 - 6 cached, predicted_n 8), line 26 [DONE].
		file: "llamacpp-chat-stream.sse", id: "chatcmpl-ZBbirePT2dsyVp1cCrYmbfyGfoRlWhvj",
		firstLine: 6, lastLine: 20, finishLine: 22, usageLine: 24,
		chunks: 8, prompt: 24, output: 8,
		text: " yo) se qu 6 Z U F",
	},
	{
		// Ollama 0.17.4 (/v1/chat/completions), max_tokens 16. Every chunk
		// repeats "role":"assistant" next to its content, so the first one
		// (line 4, " wil") is a token. Lines 4..34: 16 content chunks; line
		// 36 has "content":"" and finish_reason "length" (not a token); line
		// 38 usage: prompt_tokens 32, completion_tokens 16; line 40 [DONE].
		file: "ollama-chat-stream.sse", id: "chatcmpl-193",
		firstLine: 4, lastLine: 34, finishLine: 36, usageLine: 38,
		chunks: 16, prompt: 32, output: 16,
		text: " wil UO ha H who wou wer from with ) cL can whicl",
	},
}

func readTranscript(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "engines", name))
	if err != nil {
		t.Fatalf("real transcript missing: %v", err)
	}
	return b
}

// Line by line through the stream reader and parser, each line stamped
// with its line number in milliseconds: TTFT, ITL and E2EL then say which
// lines counted as content.
func TestRealSSETranscriptLines(t *testing.T) {
	for _, tr := range realTranscripts {
		t.Run(tr.file, func(t *testing.T) {
			ms := func(line int) time.Duration { return time.Duration(line) * time.Millisecond }
			start := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
			rec := report.Record{Start: start}
			st := streamState{api: Chat, rec: &rec, text: make([]byte, 0, textPrefix)}
			lr := lineReader{br: bufio.NewReaderSize(bytes.NewReader(readTranscript(t, tr.file)), readBuf)}
			n := 0
			for {
				line, err := lr.next()
				if err != nil {
					break
				}
				n++
				if kind, d := st.line(line, start.Add(ms(n))); kind != report.ErrNone {
					t.Fatalf("line %d: %s: %s", n, kind, d)
				}
				if done := n >= tr.finishLine; st.done != done {
					t.Errorf("after line %d the stream's end marker seen = %v, want %v (finish_reason on line %d)", n, st.done, done, tr.finishLine)
				}
				if fromUsage := n >= tr.usageLine; rec.PromptFromUsage != fromUsage || rec.OutputFromUsage != fromUsage {
					t.Errorf("after line %d usage read = %v/%v, want %v (usage on line %d)", n, rec.PromptFromUsage, rec.OutputFromUsage, fromUsage, tr.usageLine)
				}
			}
			if rec.TTFT != ms(tr.firstLine) {
				t.Errorf("TTFT at line %v, want line %d (the first chunk with content)", rec.TTFT, tr.firstLine)
			}
			if rec.E2EL != ms(tr.lastLine) {
				t.Errorf("E2EL at line %v, want line %d (the last content chunk)", rec.E2EL, tr.lastLine)
			}
			if rec.Chunks != tr.chunks || len(rec.ITL) != tr.chunks-1 {
				t.Errorf("%d content chunks, %d gaps; want %d and %d", rec.Chunks, len(rec.ITL), tr.chunks, tr.chunks-1)
			}
			for i, g := range rec.ITL {
				if g != 2*time.Millisecond { // consecutive data lines, a blank line between
					t.Errorf("gap %d = %v, want 2 lines", i, g)
				}
			}
			if rec.PromptTokens != tr.prompt || rec.OutputTokens != tr.output {
				t.Errorf("usage prompt/completion = %d/%d, want %d/%d", rec.PromptTokens, rec.OutputTokens, tr.prompt, tr.output)
			}
			if rec.FinishReason != "length" { // both transcripts ran into max_tokens
				t.Errorf("finish reason %q, want length", rec.FinishReason)
			}
			if rec.ResponseID != tr.id {
				t.Errorf("response id %q, want %q", rec.ResponseID, tr.id)
			}
			if string(st.text) != tr.text || st.reasoning {
				t.Errorf("text %q (reasoning %v), want %q", st.text, st.reasoning, tr.text)
			}
		})
	}
}

// The finish chunk is recognised by its non-null finish_reason ("length"
// in both transcripts: each stopped at max_tokens; the record keeps it,
// see TestRealSSETranscriptLines). llama.cpp's usage chunk also carries
// "timings" and prompt_tokens_details, which the parser does not read:
// its counts must be usage's (prompt 24), not timings' prompt_n 18 or the
// 6 cached tokens.
func TestRealSSEFinishAndUsageChunks(t *testing.T) {
	for _, tr := range realTranscripts {
		t.Run(tr.file, func(t *testing.T) {
			lines := bytes.Split(readTranscript(t, tr.file), []byte("\n"))
			payload := func(n int) []byte {
				b, ok := bytes.CutPrefix(lines[n-1], []byte("data: "))
				if !ok {
					t.Fatalf("line %d is not a data line: %q", n, lines[n-1])
				}
				return b
			}
			for n := tr.firstLine; n < tr.finishLine; n += 2 {
				if c := Chat.parse(payload(n)); !c.content || c.finish || c.usage {
					t.Errorf("line %d: content %v finish %v usage %v, want a content chunk only", n, c.content, c.finish, c.usage)
				}
			}
			if c := Chat.parse(payload(tr.finishLine)); !c.finish || c.content || c.usage {
				t.Errorf("finish line %d: finish %v content %v usage %v", tr.finishLine, c.finish, c.content, c.usage)
			}
			c := Chat.parse(payload(tr.usageLine))
			if !c.usage || c.prompt != tr.prompt || c.output != tr.output || c.content || c.finish {
				t.Errorf("usage line %d: %+v, want prompt %d output %d", tr.usageLine, c, tr.prompt, tr.output)
			}
			if tr.firstLine > 4 { // llama-server: the role-only first chunk
				if c := Chat.parse(payload(4)); c.content || c.finish || c.usage {
					t.Errorf("role-only chunk parsed as %+v", c)
				}
			}
		})
	}
}

// Through the client exactly as a benchmark request runs: an HTTP server
// answers with the recorded bytes.
func TestRealSSETranscriptsOverHTTP(t *testing.T) {
	for _, tr := range realTranscripts {
		t.Run(tr.file, func(t *testing.T) {
			body := readTranscript(t, tr.file)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write(body)
			}))
			t.Cleanup(srv.Close)
			q := &requester{client: newClient(1), url: srv.URL + Chat.Path(), api: Chat, timeout: 10 * time.Second}
			defer q.client.CloseIdleConnections()
			rec := report.Record{Index: 1}
			q.do(context.Background(), []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hello"}]}`), &rec)
			if !rec.OK || rec.Err != report.ErrNone || rec.Status != http.StatusOK {
				t.Fatalf("request failed: %s %s (status %d)", rec.Err, rec.Detail, rec.Status)
			}
			if rec.Chunks != tr.chunks || len(rec.ITL) != tr.chunks-1 || rec.TTFT <= 0 || rec.E2EL < rec.TTFT {
				t.Errorf("chunks %d, gaps %d, TTFT %v, E2EL %v; want %d chunks", rec.Chunks, len(rec.ITL), rec.TTFT, rec.E2EL, tr.chunks)
			}
			if !rec.PromptFromUsage || !rec.OutputFromUsage || rec.PromptTokens != tr.prompt || rec.OutputTokens != tr.output {
				t.Errorf("tokens %d/%d (from usage %v/%v), want %d/%d from usage",
					rec.PromptTokens, rec.OutputTokens, rec.PromptFromUsage, rec.OutputFromUsage, tr.prompt, tr.output)
			}
			if rec.ResponseID != tr.id || rec.Blank || rec.Echoed {
				t.Errorf("id %q blank %v echoed %v", rec.ResponseID, rec.Blank, rec.Echoed)
			}
		})
	}
}
