package prometheus

import (
	"cmp"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmtop/llmtop/model"
)

// What one refresh may take from Prometheus, like the direct scrape's caps
// (sources/engine/prom_limits.go): a Prometheus that scrapes far more than
// engines (or a --match that selects too much) must cost a bounded amount
// of memory, with a note that says what was left out, never an
// out-of-memory crash. Measured 2026-11-26: 500 vLLM targets answer about
// 2 MiB a query; a target costs the monitor about 174 KB with the core's
// histories full (BenchmarkMemoryPerTarget; 158 KB before the decoder kept
// its rows between refreshes, 165 KB before it held each series' labels
// and the fleet its reading from refresh to refresh, which cut the
// source's CPU a refresh by three quarters).
const (
	// DefaultMaxTargets is how many engine targets one source follows.
	DefaultMaxTargets = 1000
	// maxRefreshBytes bounds the bytes of all of a refresh's answers
	// together (its 6-7 queries run at once).
	maxRefreshBytes = 48 << 20
	// maxSeries bounds the series read from one answer.
	maxSeries = 100_000
	// maxModels bounds the models (model_name values) of one target, and
	// maxFleetModels the distinct ones across the fleet.
	maxModels      = 32
	maxFleetModels = 1000
	// maxLabelLen bounds a label value (a Kubernetes name is at most 253).
	maxLabelLen = 1024
	// maxWarnings bounds Prometheus's warnings kept from one answer.
	maxWarnings = 20
)

// refreshLimits is one refresh's budget, shared by its concurrent queries.
type refreshLimits struct {
	bytes      atomic.Int64 // left
	maxBytes   int64
	maxTargets int
	maxSeries  int

	// followed are the targets already followed, which keep their place
	// (read without the lock: never written once the refresh starts);
	// ver names the set (rows that were a followed target's under the
	// same ver are again, decoder.memo).
	followed map[tkey]bool
	ver      uint64

	mu       sync.Mutex
	admitted map[tkey]bool // new targets admitted this refresh
	dropped  map[tkey]bool // targets over maxTargets (at most a few thousand kept to count)
	more     bool          // more were dropped than dropped holds
	series   int           // series past maxSeries, all queries
	bad      int           // series whose value or labels could not be read
	long     int           // series with a label value over maxLabelLen
}

func (s *Source) newLimits() *refreshLimits {
	l := &refreshLimits{maxBytes: s.cfg.maxBytes, maxTargets: s.cfg.MaxTargets, maxSeries: cmp.Or(s.cfg.maxSeries, maxSeries),
		admitted: map[tkey]bool{}, dropped: map[tkey]bool{}}
	if l.maxBytes <= 0 {
		l.maxBytes = maxRefreshBytes
	}
	l.bytes.Store(l.maxBytes)
	l.followed, l.ver = s.followedTargets(l.maxTargets)
	return l
}

// followedTargets are the targets already followed (at most max), the
// same map and ver as the last refresh's while they are the same.
func (s *Source) followedTargets(max int) (map[tkey]bool, uint64) {
	f := &s.followed
	n, same := 0, true
	for _, k := range s.order {
		if t := s.targets[k]; t != nil && !t.gone && n < max {
			same = same && n < len(f.keys) && f.keys[n] == k
			n++
		}
	}
	if same && n == len(f.keys) && f.set != nil {
		return f.set, f.ver
	}
	f.keys, f.set = f.keys[:0], make(map[tkey]bool, n)
	for _, k := range s.order {
		if t := s.targets[k]; t != nil && !t.gone && len(f.keys) < max {
			f.keys = append(f.keys, k)
			f.set[k] = true
		}
	}
	f.ver++
	return f.set, f.ver
}

// followed is the set of targets a refresh found already followed.
type followed struct {
	keys []tkey
	set  map[tkey]bool
	ver  uint64
}

// admit reports whether a row of target k is kept: known targets always,
// new ones while there is room; known is whether it is a target already
// followed.
func (l *refreshLimits) admit(k tkey, onlyKnown bool) (ok, known bool) {
	if l.followed[k] {
		return true, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.admitted[k] {
		return true, false
	}
	if onlyKnown {
		return false, false // up{} rows of targets llmtop does not follow
	}
	if len(l.followed)+len(l.admitted) < l.maxTargets {
		l.admitted[k] = true
		return true, false
	}
	if len(l.dropped) < 4*l.maxTargets {
		l.dropped[k] = true
	} else {
		l.more = true
	}
	return false, false
}

func (l *refreshLimits) count(series, bad, long int) {
	l.mu.Lock()
	l.series += series
	l.bad += bad
	l.long += long
	l.mu.Unlock()
}

// notes say what this refresh left out.
func (l *refreshLimits) notes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	if n := len(l.dropped); n > 0 {
		what := fmt.Sprint(n)
		if l.more {
			what = "over " + what
		}
		out = append(out, fmt.Sprintf("llmtop follows at most %d targets (--prometheus-max-targets): %s others dropped; narrow --match", l.maxTargets, what))
	}
	if l.series > 0 {
		out = append(out, fmt.Sprintf("an answer held over %d series: %d dropped; narrow --match", l.maxSeries, l.series))
	}
	if l.bad > 0 {
		out = append(out, fmt.Sprintf("%d series dropped: value or labels not readable", l.bad))
	}
	if l.long > 0 {
		out = append(out, fmt.Sprintf("%d series dropped: a label value over %d bytes", l.long, maxLabelLen))
	}
	return out
}

// capped fails a body once the refresh's answers together go past their
// bound.
type capped struct {
	r   interface{ Read([]byte) (int, error) }
	lim *refreshLimits
}

func (c *capped) Read(p []byte) (int, error) {
	left := c.lim.bytes.Load()
	if left <= 0 {
		return 0, &cappedError{fmt.Sprintf("Prometheus's answers are over %s together this refresh: narrow --match", sizeText(c.lim.maxBytes))}
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := c.r.Read(p)
	c.lim.bytes.Add(-int64(n))
	return n, err
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// cappedError is the bound reached.
type cappedError struct{ msg string }

func (e *cappedError) Error() string { return e.msg }

// StoreConfig sizes the core's histories for a source refreshed every
// interval: a point per refresh over the longest window, not one a second
// (at a 5 s refresh a fifth of the memory per target).
func StoreConfig(interval time.Duration) model.StoreConfig {
	c := model.DefaultStoreConfig
	if interval > time.Second {
		c.Points = int(c.MaxWindow/interval) + 2
	}
	return c
}
