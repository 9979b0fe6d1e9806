package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llmtop/llmtop/model"
)

// withPromFlags sets the --prometheus flags for one test.
func withPromFlags(t *testing.T, url, user, pwFile string) {
	t.Helper()
	old := promFlags
	promFlags.url, promFlags.user, promFlags.passwordFile, promFlags.timeout = url, user, pwFile, 2*time.Second
	t.Cleanup(func() { promFlags = old })
}

// onePod answers like a Prometheus scraping one vLLM pod: each concept the
// query tags (label_replace … "llmtop_concept") gets one series, up{} one
// target; the JSON is the HTTP API's instant-vector shape.
func onePod(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	q := r.Form.Get("query")
	var res []string
	row := func(labels string, v string) {
		res = append(res, fmt.Sprintf(`{"metric":{%s},"value":[1795541673.329,%q]}`, labels, v))
	}
	base := `"job":"vllm","instance":"10.1.2.3:8000"`
	if q == "up" {
		row(base, "1")
	} else if strings.Contains(q, "vllm:") {
		for _, m := range regexp.MustCompile(`"llmtop_concept", "([^"]+)"`).FindAllStringSubmatch(q, -1) {
			switch {
			case m[1] == "labels":
				row(base+`,"pod":"vllm-0","namespace":"prod","llmtop_concept":"labels"`, "1")
			case m[1] == "started", strings.HasPrefix(m[1], "router:"):
				// a vLLM pod serves none of the routers' families
			default:
				row(base+`,"model_name":"llama-3-8b","llmtop_concept":"`+m[1]+`"`, "0.5")
			}
		}
	}
	fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[%s]}}`, strings.Join(res, ","))
}

func TestSnapshotPrometheusJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(onePod))
	defer srv.Close()
	withPromFlags(t, srv.URL, "", "")
	var out, errOut bytes.Buffer
	if err := snapshotPrometheus(context.Background(), &out, &errOut, nil, true); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Endpoints []model.EndpointJSON `json:"endpoints"`
		Prom      promStatus           `json:"prometheus"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Endpoints) != 1 || doc.Prom.Targets != 1 || doc.Prom.Error != "" {
		t.Fatalf("%s", out.String())
	}
	e := doc.Endpoints[0]
	if e.URL != "http://10.1.2.3:8000" || e.Name != "prod/vllm-0" || e.Source != "prometheus" || e.Engine != model.VLLM ||
		e.Model != "llama-3-8b" || len(e.Missing) == 0 || e.Metrics == nil || e.Metrics.KVCacheUsageRatio != model.Some(0.5) {
		t.Errorf("entry %+v", e)
	}
}

func TestSnapshotPrometheusErrorsKeepSecrets(t *testing.T) {
	const pw = "s3cret-pw-value"
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().String()
	ln.Close()
	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer denied.Close()
	for _, c := range []struct{ name, url, user, file, want string }{
		{"down", "http://admin:" + pw + "@" + closed, "", "", "cannot reach Prometheus"},
		{"wrong password", denied.URL, "admin", pwFile, "--prometheus-password-file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			withPromFlags(t, c.url, c.user, c.file)
			var out, errOut bytes.Buffer
			err := snapshotPrometheus(context.Background(), &out, &errOut, nil, true)
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != 3 || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want exit 3 saying %q", err, c.want)
			}
			if !strings.Contains(out.String(), `"error": "`) {
				t.Errorf("the JSON does not carry the error:\n%s", out.String())
			}
			for _, s := range []string{out.String(), errOut.String(), fmt.Sprint(err)} {
				if strings.Contains(s, pw) {
					t.Errorf("the password was printed: %s", s)
				}
			}
		})
	}
}
