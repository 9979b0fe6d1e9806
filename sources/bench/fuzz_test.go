package bench

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmtop/llmtop/sources/bench/report"
)

// FuzzSSEReader feeds any stream through the line reader and the SSE /
// NDJSON parser, line by line as a response arrives: it never panics, the
// record's times never go backwards, and its token counts are never
// negative (a negative usage would print negative tok/s). Seeds are the
// real engines' streams in testdata/engines.
func FuzzSSEReader(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "engines", "*.sse"))
	if len(paths) == 0 {
		f.Fatal("no real SSE transcripts")
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(0))
	}
	f.Add([]byte("{\"message\":{\"content\":\"x\"},\"done\":true,\"prompt_eval_count\":-5,\"eval_count\":-9}\n"), uint8(3))
	f.Add([]byte("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":-1,\"completion_tokens\":-2}}\n\n"), uint8(0))
	apis := []API{Chat, Completions, OllamaGenerate, OllamaChat}
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		start := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
		rec := report.Record{Start: start}
		st := streamState{api: apis[int(which)%len(apis)], rec: &rec, text: make([]byte, 0, textPrefix)}
		lr := lineReader{br: bufio.NewReaderSize(bytes.NewReader(body), readBuf)}
		for n := 1; ; n++ {
			line, err := lr.next()
			if err != nil {
				break
			}
			if kind, _ := st.line(line, start.Add(time.Duration(n)*time.Millisecond)); kind != report.ErrNone {
				break
			}
			if len(st.text) > cap(st.text) || cap(st.text) > textPrefix {
				t.Fatalf("answer text grew past its buffer: %d/%d", len(st.text), cap(st.text))
			}
		}
		if rec.TTFT < 0 || rec.E2EL < rec.TTFT || rec.Chunks < 0 {
			t.Fatalf("TTFT %v E2EL %v chunks %d", rec.TTFT, rec.E2EL, rec.Chunks)
		}
		for _, d := range rec.ITL {
			if d < 0 {
				t.Fatalf("ITL %v", d)
			}
		}
		if rec.PromptTokens < 0 || rec.OutputTokens < 0 {
			t.Fatalf("prompt %d output %d tokens", rec.PromptTokens, rec.OutputTokens)
		}
	})
}
