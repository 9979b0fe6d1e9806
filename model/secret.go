package model

import (
	"encoding/base64"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
)

// The one scrub every output passes (Clean, SanitizeLine, RedactText,
// RedactURL and SafeOutput apply it; the screen, text, JSON, exporter
// labels, recordings, replay headers and errors are written through them):
// the credentials llmtop was given (AddSecret: API keys, Prometheus
// passwords and tokens, URL passwords) wherever an outside answer echoes
// them, and any HTTP credential in text ("Basic <base64>", "Bearer
// <token>"), become REDACTED.

var (
	secretsMu sync.Mutex
	secrets   atomic.Pointer[[]string] // copy on write: read on every Clean
)

// minSecret is the shortest secret scrubbed: a shorter one would redact
// ordinary text.
const minSecret = 4

// AddSecret registers a credential llmtop was given, so that no output
// ever shows it (nor, for a user:password pair, its base64). Empty and very
// short strings are ignored.
func AddSecret(s string) {
	s = strings.TrimSpace(s)
	if len(s) < minSecret {
		return
	}
	secretsMu.Lock()
	defer secretsMu.Unlock()
	old := secrets.Load()
	var list []string
	if old != nil {
		for _, x := range *old {
			if x == s {
				return
			}
		}
		list = append(list, *old...)
	}
	list = append(list, s)
	// The longest first: a secret that contains another is replaced whole.
	for i := len(list) - 1; i > 0 && len(list[i]) > len(list[i-1]); i-- {
		list[i], list[i-1] = list[i-1], list[i]
	}
	secrets.Store(&list)
}

// AddBasicAuth registers a user:password pair: the password, and the
// base64 an echoed Authorization header would carry.
func AddBasicAuth(user, password string) {
	if password == "" {
		return
	}
	AddSecret(password)
	AddSecret(base64.StdEncoding.EncodeToString([]byte(user + ":" + password)))
}

// authValue matches an HTTP credential in text: the scheme, then a token
// (help text's "Bearer …" is not one); isCredential decides.
var authValue = regexp.MustCompile(`(?i)\b(basic|bearer)(\s+)([A-Za-z0-9+/=._~\-]{6,})`)

// isCredential tells a credential from prose after "Basic"/"Bearer": a
// basic one is base64 of user:password; a bearer one has a digit or is
// long (sk-…, a JWT), where "Bearer tokens" is neither.
func isCredential(scheme, tok string) bool {
	if strings.EqualFold(scheme, "basic") {
		b, err := base64.StdEncoding.DecodeString(tok)
		return err == nil && strings.Contains(string(b), ":")
	}
	return len(tok) >= 12 || strings.ContainsAny(tok, "0123456789")
}

// Scrub replaces every registered secret and HTTP credential in s.
func Scrub(s string) string {
	if p := secrets.Load(); p != nil {
		for _, x := range *p {
			if strings.Contains(s, x) {
				s = strings.ReplaceAll(s, x, Redacted)
			}
		}
	}
	if hasAuthWord(s) {
		s = authValue.ReplaceAllStringFunc(s, func(m string) string {
			sub := authValue.FindStringSubmatch(m)
			if sub[3] == Redacted || !isCredential(sub[1], sub[3]) {
				return m
			}
			return sub[1] + sub[2] + Redacted
		})
	}
	return s
}

// hasAuthWord is Scrub's fast path: most text names no credential scheme.
func hasAuthWord(s string) bool {
	for i := 0; i+5 <= len(s); i++ {
		switch s[i] | 0x20 {
		case 'b':
			// EqualFold, not ToLower: a GPU's name ("80GB HBM3") is
			// scrubbed every refresh, and lowering its B allocated
			if strings.EqualFold(s[i:i+5], "basic") || i+6 <= len(s) && strings.EqualFold(s[i:i+6], "bearer") {
				return true
			}
		}
	}
	return false
}
