package model

import (
	"encoding/base64"
	"strings"
	"testing"
)

// Every output's scrub: the keys llmtop was given and any HTTP credential
// an outside answer echoes are REDACTED; prose naming the schemes is kept.
func TestScrubRedactsGivenSecretsAndCredentials(t *testing.T) {
	AddSecret("sk-given-key-0123")
	AddBasicAuth("admin", "pa55word")
	basic := base64.StdEncoding.EncodeToString([]byte("admin:pa55word"))
	other := base64.StdEncoding.EncodeToString([]byte("root:toor"))
	for _, s := range []string{
		"version echo: Authorization: Bearer sk-given-key-0123",
		"vllm 0.8 sk-given-key-0123",
		"401: header was Basic " + basic,
		"401: header was basic " + other,
		"Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc",
		"password pa55word in the body",
	} {
		for _, out := range []string{Clean(s), RedactText(s), SafeOutput(s), SanitizeLine([]byte(s)), RedactURL(s)} {
			if strings.Contains(out, "sk-given") || strings.Contains(out, basic) || strings.Contains(out, other) ||
				strings.Contains(out, "eyJhbGci") || strings.Contains(out, "pa55word") || !strings.Contains(out, Redacted) {
				t.Errorf("%q -> %q", s, out)
			}
		}
	}
	for _, s := range []string{"pass --api-key so llmtop sends Authorization: Bearer …", "Bearer tokens are checked", "basic auth failed", "Basic configuration"} {
		if got := Clean(s); got != s {
			t.Errorf("prose changed: %q -> %q", s, got)
		}
	}
}
