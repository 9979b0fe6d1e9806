package exporter

import (
	"strings"
	"unicode/utf8"

	"github.com/llmtop/llmtop/model"
)

// MaxLabelLen bounds every label value built from outside text (model
// names, URLs, finding titles and actions), in bytes: a hostile engine
// cannot blow up Prometheus's index or an alert's notification.
const MaxLabelLen = 256

// labelValue makes outside text fit for a label: control sequences
// removed, URL credentials and secret-looking query values redacted, valid
// UTF-8, at most MaxLabelLen bytes (cut on a rune boundary, marked with …).
func labelValue(s string) string {
	s = model.RedactText(s)
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
	if len(s) <= MaxLabelLen {
		return s
	}
	const ell = "…"
	cut := MaxLabelLen - len(ell)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ell
}

// endpointLabel is the endpoint label: the URL with any credential
// redacted (the core's IDs are already redacted; this holds even when a
// caller hands it a raw URL).
func endpointLabel(u string) string { return labelValue(model.RedactURL(u)) }
