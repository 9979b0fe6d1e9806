package logs

import "context"

// Drain delivers what is queued now, on the caller's goroutine, for a
// caller that drives the source on its own clock (a simulated log in a
// test or a benchmark) instead of running Run.
func (s *Source) Drain() {
	s.mu.Lock()
	batch := s.queue
	s.queue = nil
	s.mu.Unlock()
	s.deliver(context.Background(), batch)
}
