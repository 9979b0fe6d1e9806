//go:build engines

package engines

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// fixtureDir holds the real engines' answers, recorded by these tests with LLMTOP_RECORD_FIXTURES=1
// and checked against the live engine on every other run: when an engine's output changes shape
// (a new metric, a renamed field) the check fails and says how to re-record.
const fixtureDir = "../../testdata/engines"

func recording() bool { return os.Getenv("LLMTOP_RECORD_FIXTURES") == "1" }

// recordFixture writes (when recording) or compares the shape of a fixture against live output.
// SSE transcripts compare the set of JSON key paths in their chunks, JSON documents their key
// paths; Prometheus text compares the metric families, their types and label names.
func recordFixture(t *testing.T, name, preamble string, live []byte) {
	t.Helper()
	path := filepath.Join(fixtureDir, name)
	if recording() {
		if err := os.MkdirAll(fixtureDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append([]byte(preamble), live...), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %s", path)
		return
	}
	saved, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("fixture %s missing (%v): record it with LLMTOP_RECORD_FIXTURES=1 make test-engines", path, err)
	}
	shape := sseShape
	switch {
	case strings.HasSuffix(name, ".txt"):
		shape = promShape
	case strings.HasSuffix(name, ".json"):
		shape = jsonShape
	}
	want, got := shape(saved), shape(live)
	if !slices.Equal(want, got) {
		t.Errorf("the engine's output no longer has the shape of %s:\n fixture: %v\n    live: %v\nre-record with LLMTOP_RECORD_FIXTURES=1 make test-engines and review the diff",
			path, want, got)
	}
}

// ssePreamble is the SSE comment block (lines starting with ':' are comments) that says where a
// transcript came from.
func ssePreamble(engineVersion string, maxTokens int) string {
	return fmt.Sprintf(": recorded by test/engines (LLMTOP_RECORD_FIXTURES=1) on %s\n"+
		": engine: %s\n: model: cmd/tinygguf (random weights); POST /v1/chat/completions, stream=true, "+
		"stream_options.include_usage=true, max_tokens=%d\n", time.Now().UTC().Format("2006-01-02"), engineVersion, maxTokens)
}

// promPreamble is the comment block of a recorded /metrics scrape.
func promPreamble(engineVersion, what string) string {
	return fmt.Sprintf("# recorded by test/engines (LLMTOP_RECORD_FIXTURES=1) on %s\n# engine: %s\n# %s\n",
		time.Now().UTC().Format("2006-01-02"), engineVersion, what)
}

// sseShape lists the distinct JSON key paths of the data chunks, plus the terminator.
func sseShape(b []byte) []string {
	set := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			set["[DONE]"] = true
			continue
		}
		var v any
		if json.Unmarshal([]byte(data), &v) != nil {
			set["<not json>"] = true
			continue
		}
		keyPaths("", v, set)
	}
	return sortedKeys(set)
}

// jsonShape lists the distinct key paths of a JSON document (a recorded JSON fixture carries its
// engine version in its file name: JSON has no comments).
func jsonShape(b []byte) []string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return []string{"<not json>"}
	}
	set := map[string]bool{}
	keyPaths("", v, set)
	return sortedKeys(set)
}

func keyPaths(prefix string, v any, set map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := prefix + "." + k
			set[p] = true
			keyPaths(p, e, set)
		}
	case []any:
		for _, e := range x {
			keyPaths(prefix+"[]", e, set)
		}
	}
}

// promShape lists "name type label,label" for every family of a Prometheus text body.
func promShape(b []byte) []string {
	types := map[string]string{}
	labels := map[string]map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 4 && f[0] == "#" && f[1] == "TYPE" {
			types[f[2]] = f[3]
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest := line, ""
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		if labels[name] == nil {
			labels[name] = map[string]bool{}
		}
		if strings.HasPrefix(rest, "{") {
			for _, kv := range strings.Split(rest[1:strings.Index(rest, "}")], ",") {
				if k, _, ok := strings.Cut(kv, "="); ok {
					labels[name][k] = true
				}
			}
		}
	}
	var out []string
	for name, ls := range labels {
		out = append(out, fmt.Sprintf("%s %s {%s}", name, types[name], strings.Join(sortedKeys(ls), ",")))
	}
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// postJSON posts body and decodes the JSON answer into v.
func postJSON(ctx context.Context, url string, body []byte, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	replayable(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: HTTP %d: %.300s", url, resp.StatusCode, b)
	}
	return json.Unmarshal(b, v)
}

// firstLineWith returns the first line of s containing sub (trimmed), or s's first line.
func firstLineWith(s, sub string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		if strings.Contains(l, sub) {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[0])
}
