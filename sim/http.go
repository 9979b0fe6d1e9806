package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Handler serves vLLM's HTTP surface: /v1/completions, /v1/chat/completions,
// /v1/models, /tokenize, /detokenize, /health, /ping, /version, /load and
// /metrics.
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	var inflight atomic.Int64
	counted := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			inflight.Add(1)
			defer inflight.Add(-1)
			h(w, r)
		}
	}
	mux.HandleFunc("POST /v1/completions", counted(func(w http.ResponseWriter, r *http.Request) { s.serveGenerate(w, r, false) }))
	mux.HandleFunc("POST /v1/chat/completions", counted(func(w http.ResponseWriter, r *http.Request) { s.serveGenerate(w, r, true) }))
	mux.HandleFunc("GET /v1/models", s.serveModels)
	mux.HandleFunc("POST /tokenize", s.serveTokenize)
	mux.HandleFunc("POST /detokenize", s.serveDetokenize)
	mux.HandleFunc("GET /health", s.serveHealth)
	mux.HandleFunc("GET /ping", s.serveHealth)
	mux.HandleFunc("POST /ping", s.serveHealth)
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, _ *http.Request) {
		// "simulated" is the sim's own field: how llmtop badges it SIMULATED.
		writeJSON(w, http.StatusOK, map[string]any{"version": Version, "simulated": true})
	})
	mux.HandleFunc("GET /load", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"server_load": inflight.Load()})
	})
	mux.HandleFunc("GET /metrics", s.serveMetrics)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not Found"})
	})
	return s.gate(mux)
}

// gate drops connections that arrive while the simulated process is not
// listening (Serve closes the port; this covers the race and httptest).
func (s *Sim) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if up, _ := s.Accepting(); !up {
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					_ = c.Close()
					return
				}
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes vLLM's ErrorResponse: {"error": {message, type, param, code}}.
func writeError(w http.ResponseWriter, code int, typ, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

func (s *Sim) serveHealth(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	s.runUntil(s.clock.Now())
	p := s.phase
	s.mu.Unlock()
	if p != phaseUp {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Sim) serveModels(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	c, created := s.cfg, s.upAt.Unix()
	if s.upAt.IsZero() {
		created = s.now.Unix()
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{map[string]any{
		"id": c.served, "object": "model", "created": created, "owned_by": "vllm",
		"root": c.model.ID, "parent": nil, "max_model_len": c.maxModelLen,
		"permission": []any{map[string]any{
			"id": "modelperm-sim", "object": "model_permission", "created": created,
			"allow_create_engine": false, "allow_sampling": true, "allow_logprobs": true,
			"allow_search_indices": false, "allow_view": true, "allow_fine_tuning": false,
			"organization": "*", "group": nil, "is_blocking": false,
		}},
	}}})
}

// garbage is what a broken exporter or a proxy error page looks like.
const garbage = "<html><body>upstream connect error or disconnect/reset before headers</body></html>\nvllm:num_requests_running{engine=\"0\" 3\n\x00\x01 not # a metric\n"

func (s *Sim) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	s.runUntil(s.clock.Now())
	mode, eng := s.broken, s.eng
	var err error
	var fams []*dto.MetricFamily
	if mode == metricsOK && eng != nil {
		fams, err = eng.met.reg.Gather() // under the lock: one consistent step
	}
	s.mu.Unlock()
	switch mode {
	case metrics404:
		writeJSON(w, http.StatusNotFound, map[string]any{"detail": "Not Found"})
		return
	case metrics500:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = fmt.Fprint(w, "Internal Server Error")
		return
	case metricsGarbage:
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = fmt.Fprint(w, garbage)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	// Encoded whole, then sent with its length, as prometheus_client
	// (vLLM, SGLang) and the Rust engines do: a scrape arrives at once,
	// not in a stream of small chunks.
	format := expfmt.NewFormat(expfmt.TypeTextPlain)
	var body bytes.Buffer
	enc := expfmt.NewEncoder(&body, format)
	for _, f := range fams {
		if err := enc.Encode(f); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	w.Header().Set("Content-Type", string(format))
	w.Header().Set("Content-Length", strconv.Itoa(body.Len()))
	_, _ = w.Write(body.Bytes())
}

// Serve serves the sim on ln until ctx is done, opening and closing the
// port as the simulated process starts, crashes and restarts: while it is
// down, clients get "connection refused" as from a real dead server. The
// port is reopened at ln's address.
func (s *Sim) Serve(ctx context.Context, ln net.Listener) error {
	addr := ln.Addr().String()
	h := s.Handler()
	for {
		up, changed := s.Accepting()
		if !up {
			if ln != nil {
				_ = ln.Close()
				ln = nil
			}
			select {
			case <-ctx.Done():
				return nil
			case <-changed:
			}
			continue
		}
		if ln == nil {
			var err error
			if ln, err = listenRetry(ctx, addr); err != nil {
				return err
			}
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		done := make(chan error, 1)
		go func(l net.Listener) { done <- srv.Serve(l) }(ln)
		select {
		case <-ctx.Done():
			_ = srv.Close()
			<-done
			return nil
		case <-changed:
			_ = srv.Close()
			<-done
			ln = nil
		case err := <-done:
			if !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			ln = nil
		}
	}
}

// listenRetry reopens addr; the old socket may linger for a moment.
func listenRetry(ctx context.Context, addr string) (net.Listener, error) {
	var lastErr error
	for i := 0; i < 50; i++ {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			return ln, nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("sim: reopen %s: %w", addr, lastErr)
}
