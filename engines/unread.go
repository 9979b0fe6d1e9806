package engines

import "strings"

// What llmtop reads nowhere, so that the scrape's parser skips those
// families' samples (issue 33: on the real vLLM capture 140 of its 376
// sample lines). A name here must be read by no adapter, rule or screen:
// TestUnreadIsReadNowhere holds each one to that, and a family that is read
// after all is taken out of the list, never parsed around.

// ProcessStart is prometheus_client's process start time: the one family
// of the client library's own that llmtop reads (an engine's uptime, a
// restart's time).
const ProcessStart = "process_start_time_seconds"

// clientFamilies are the prefixes of the Prometheus client libraries' own
// families (Python's garbage collector and build, the process's CPU,
// memory and descriptors), which say nothing of the engine.
var clientFamilies = []string{"python_gc_", "python_info", "process_"}

// Unread says whether llmtop reads family name nowhere when s serves it (s
// nil: any endpoint): the client libraries' own families but
// ProcessStart, each counter's, histogram's and summary's _created
// timestamp (prometheus_client writes one beside each), and the families s
// lists in Unread.
func Unread(s *Spec, name string) bool {
	if strings.HasSuffix(name, "_created") {
		return true
	}
	if name != ProcessStart {
		for _, p := range clientFamilies {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
	}
	if s != nil {
		for _, u := range s.Unread {
			if u == name {
				return true
			}
		}
	}
	return false
}
