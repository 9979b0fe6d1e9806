package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/llmtop/llmtop/model"
)

// Found is an endpoint that answered during discovery.
type Found struct {
	URL      string
	Identity model.Identity
}

// DefaultPorts are the engines' default ports: vLLM and trtllm-serve 8000,
// SGLang 30000, llama.cpp 8080 (9931 announced), TGI 3000 (80 in its
// image), Ollama 11434, Triton metrics 8002.
var DefaultPorts = []int{8000, 30000, 8080, 9931, 3000, 80, 11434, 8002}

// Discover probes host on each port at once and returns what answered, in
// port order. Something that answers HTTP but matches no engine is reported
// with Engine unknown; ports where nothing listens are left out.
func Discover(ctx context.Context, host string, ports []int, timeout time.Duration) []Found {
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	client := &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:           (&net.Dialer{Timeout: timeout}).DialContext,
			ResponseHeaderTimeout: timeout,
			DisableKeepAlives:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	results := make([]*Found, len(ports))
	var wg sync.WaitGroup
	for i, port := range ports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := fmt.Sprintf("http://%s", net.JoinHostPort(host, strconv.Itoa(port)))
			id, err := Identify(ctx, client, base, model.Unknown)
			if err != nil && !errors.Is(err, ErrUnrecognised) {
				return
			}
			results[i] = &Found{URL: base, Identity: id}
		}()
	}
	wg.Wait()
	var out []Found
	for _, f := range results {
		if f != nil {
			out = append(out, *f)
		}
	}
	return out
}
