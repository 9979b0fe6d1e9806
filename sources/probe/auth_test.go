package probe

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A key given for host:port A never reaches host:port B, not even by a
// redirect to the same host name on another port (Go's client forwards a
// hand-set Authorization header there).
func TestGuardSendsTheKeyToItsOriginOnly(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer other.Close()
	var got string
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/go" {
			http.Redirect(w, r, other.URL+"/x", http.StatusTemporaryRedirect)
			return
		}
		got = r.Header.Get("Authorization")
	}))
	defer home.Close()
	// both on 127.0.0.1: same host name, other port
	for _, c := range []*http.Client{
		{Transport: Bearer(nil, home.URL, "sk-secret-1")},
		{Transport: Guard(nil, home.URL, nil)}, // the key set by hand on the request
	} {
		req, _ := http.NewRequest("GET", home.URL+"/ok", nil)
		req.Header.Set("Authorization", "Bearer sk-secret-1")
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
		}
		if got != "Bearer sk-secret-1" {
			t.Errorf("its own origin got %q", got)
		}
		req, _ = http.NewRequest("GET", home.URL+"/go", nil)
		req.Header.Set("Authorization", "Bearer sk-secret-1")
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) != 2 || strings.Join(leaked, "") != "" {
		t.Errorf("the other port got %q", leaked)
	}
}

func TestOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"http://H:8000/x": "http://h:8000", "http://h/x": "http://h:80", "https://h": "https://h:443", "h:8000": "",
	} {
		if got := Origin(in); got != want {
			t.Errorf("Origin(%q) = %q, want %q", in, got, want)
		}
	}
}
