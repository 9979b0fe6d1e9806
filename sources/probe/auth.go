package probe

import (
	"net/http"
	"net/url"
	"strings"
)

// The one credential rule of every HTTP path llmtop takes (scrapes,
// probes, the load generator, the Prometheus source, redirects included):
// a credential goes only to the scheme, host AND port it was given for.
// Go's client keeps a hand-set Authorization header on a redirect to the
// same host name whatever the port; Guard removes it there.

// Origin is a URL's scheme://host:port, the port explicit ("" when raw is
// not an absolute URL).
func Origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return originOf(u)
}

func originOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		default:
			port = "80"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// Guard wraps next: requests to base's origin get the credential set sets
// (nil: none added, a hand-set one kept); requests to any other origin
// carry no Authorization header at all.
func Guard(next http.RoundTripper, base string, set func(http.Header)) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &guard{next: next, origin: Origin(base), set: set}
}

// Bearer is Guard sending "Authorization: Bearer key" ("" sends none).
func Bearer(next http.RoundTripper, base, key string) http.RoundTripper {
	if key == "" {
		return Guard(next, base, nil)
	}
	return Guard(next, base, func(h http.Header) { h.Set("Authorization", "Bearer "+key) })
}

type guard struct {
	next   http.RoundTripper
	origin string
	set    func(http.Header)
}

func (g *guard) RoundTrip(r *http.Request) (*http.Response, error) {
	same := g.origin != "" && originOf(r.URL) == g.origin
	switch {
	case same && g.set != nil:
		r = r.Clone(r.Context())
		g.set(r.Header)
	case !same && (r.Header.Get("Authorization") != "" || r.Header.Get("Proxy-Authorization") != ""):
		r = r.Clone(r.Context())
		r.Header.Del("Authorization")
	}
	return g.next.RoundTrip(r)
}

// Unwrap is the transport under the guard.
func (g *guard) Unwrap() http.RoundTripper { return g.next }
