package model

import (
	"net/url"
	"regexp"
	"strings"
)

// Redacted stands in for a secret in every URL llmtop prints or saves. The
// requests themselves keep the real URL.
const Redacted = "REDACTED"

// secretParam matches a query parameter whose name says it carries a
// secret (token, key, api_key, access_token, sig, signature, password,
// secret, auth, credential, session, jwt…) and its value, up to the next
// separator; a backslash or quote ends the value too, so a URL inside a JSON
// string stays valid JSON (where encoding/json writes & as \u0026).
var secretParam = regexp.MustCompile(`(?i)((?:[?&;]|\\u0026)[a-z0-9_.\-]*(?:token|key|secret|passw|pwd|sig|auth|cred|session|jwt)[a-z0-9_.\-]*=)[^&#\s"'\\<>]*`)

// userinfo matches the user[:password]@ part of a URL in free text.
var userinfo = regexp.MustCompile(`(://)[^/?#\s@"'\\<>]+@`)

// RedactURL returns raw fit to print: its userinfo and secret-looking query
// values replaced by REDACTED, and cleaned (Clean) of control sequences.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.User == nil && u.RawQuery == "") {
		return RedactText(raw)
	}
	if u.User != nil {
		u.User = url.User(Redacted)
	}
	return RedactText(u.String())
}

// RedactText cleans s (Clean) and redacts every URL credential and
// secret-looking query value in it: error messages and hints quote URLs.
func RedactText(s string) string {
	s = Clean(s)
	if !strings.Contains(s, "@") && !strings.Contains(s, "=") {
		return s
	}
	s = userinfo.ReplaceAllString(s, "${1}"+Redacted+"@")
	return secretParam.ReplaceAllString(s, "${1}"+Redacted)
}

// SafeOutput makes a whole block of output (a table, a report, an
// indented JSON document) safe to write to a terminal or a file: each line
// is cleaned of control sequences and its URL secrets are redacted;
// newlines and tabs stay.
func SafeOutput(s string) string {
	if plain([]byte(s)) && !strings.Contains(s, "@") && !strings.Contains(s, "=") {
		return Scrub(s)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = clean([]byte(l), modeText)
		if strings.Contains(l, "@") || strings.Contains(l, "=") {
			l = userinfo.ReplaceAllString(l, "${1}"+Redacted+"@")
			l = secretParam.ReplaceAllString(l, "${1}"+Redacted)
		}
		lines[i] = Scrub(l)
	}
	return strings.Join(lines, "\n")
}

// secretFlag matches a command-line flag whose name says it carries a
// secret (--api-key, --hf-token, --password, --client-secret…) and its
// value, given as --flag=value or --flag value.
var secretFlag = regexp.MustCompile(`(?i)(^|\s)(--?[a-z0-9_.\-]*(?:key|token|secret|passw|pwd|auth|cred)[a-z0-9_.\-]*)(=|\s+)(\S+)`)

// RedactCmdline returns a process command line fit to show: cleaned, the
// values of secret-looking flags (vllm serve --api-key sk-…) and URL
// credentials replaced by REDACTED. Flags that only name tokens as a unit
// or a tokenizer (--max-num-batched-tokens 8192, --tokenizer x) are kept.
func RedactCmdline(cmd string) string {
	cmd = Clean(cmd)
	cmd = secretFlag.ReplaceAllStringFunc(cmd, func(m string) string {
		sub := secretFlag.FindStringSubmatch(m)
		name := strings.ToLower(sub[2])
		if strings.Contains(name, "tokens") || strings.Contains(name, "tokenizer") {
			return m
		}
		return sub[1] + sub[2] + sub[3] + Redacted
	})
	cmd = secretEnv.ReplaceAllStringFunc(cmd, func(m string) string {
		sub := secretEnv.FindStringSubmatch(m)
		if name := strings.ToLower(sub[2]); strings.Contains(name, "tokens") || strings.Contains(name, "tokenizer") {
			return m
		}
		return sub[1] + sub[2] + "=" + Redacted
	})
	return RedactText(cmd)
}

// secretEnv matches an environment assignment before a command (as
// `llmtop run -- HF_TOKEN=hf_… vllm serve` launches it) whose name says
// it carries a secret.
var secretEnv = regexp.MustCompile(`(^|\s)([A-Za-z_][A-Za-z0-9_]*(?:KEY|TOKEN|SECRET|PASSW|PWD|AUTH|CRED)[A-Za-z0-9_]*)=(\S+)`)
