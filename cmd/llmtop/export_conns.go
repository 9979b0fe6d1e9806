package main

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// The exporter's connections: Prometheus keeps one open between scrapes,
// but a client that opens thousands and leaves them idle must not hold the
// exporter's memory and file descriptors (19 000 idle keep-alives took it
// from 24 to 405 MB, and at the fd limit Prometheus's own scrape timed
// out). Idle connections close after exportIdleTimeout; past
// exportMaxConns, a new connection closes the longest-idle one, or is
// itself closed when every other is busy.
const (
	exportIdleTimeout = 90 * time.Second // Prometheus's default scrape interval is 1 m
	exportMaxConns    = 256
)

// connLimit tracks the server's connections through http.Server.ConnState.
type connLimit struct {
	max  int
	mu   sync.Mutex
	open map[net.Conn]time.Time // the zero time while busy, else when it went idle
}

func newConnLimit(max int) *connLimit {
	return &connLimit{max: max, open: map[net.Conn]time.Time{}}
}

func (l *connLimit) state(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateNew:
		l.open[c] = time.Time{}
		for len(l.open) > l.max {
			if !l.closeIdlest(c) {
				delete(l.open, c)
				c.Close() // every other connection is busy
				return
			}
		}
	case http.StateActive:
		if _, ok := l.open[c]; ok {
			l.open[c] = time.Time{}
		}
	case http.StateIdle:
		if _, ok := l.open[c]; ok {
			l.open[c] = time.Now()
		}
	case http.StateClosed, http.StateHijacked:
		delete(l.open, c)
	}
}

// closeIdlest closes the connection idle the longest (never keep), and
// reports whether there was one.
func (l *connLimit) closeIdlest(keep net.Conn) bool {
	var oldest net.Conn
	var at time.Time
	for c, t := range l.open {
		if c != keep && !t.IsZero() && (oldest == nil || t.Before(at)) {
			oldest, at = c, t
		}
	}
	if oldest == nil {
		return false
	}
	delete(l.open, oldest)
	oldest.Close()
	return true
}

// count is the connections open now.
func (l *connLimit) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.open)
}
