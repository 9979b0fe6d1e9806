package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/sources/probe"
)

// Credentials, in one place: which API key goes to which endpoint, and the
// secrets every output scrubs (model.AddSecret). A key goes only to the
// scheme, host and port it was given for (probe.Guard does that on every
// request, redirects included); here is which endpoints get one at all:
//
//   - --api-key KEY or --api-key-file FILE (not visible in ps): every
//     endpoint llmtop opens for this command, the person having given it;
//   - $OPENAI_API_KEY, which nobody typed for llmtop: only the endpoints the
//     person named (arguments, the config's endpoints, this machine's own
//     ports), never one a Prometheus target's labels chose.

var apiKeyFile string

var creds struct {
	mu      sync.Mutex
	named   map[string]bool // origins (probe.Origin) of the endpoints named
	secrets []string        // their URLs' credentials (urlSecrets)
}

// givenKey is --api-key or the content of --api-key-file (and registers
// every key llmtop was given, $OPENAI_API_KEY included, with the scrub).
func givenKey() (string, error) {
	model.AddSecret(os.Getenv("OPENAI_API_KEY"))
	key := engineFlags.apiKey
	if apiKeyFile != "" {
		if key != "" {
			return "", errors.New("--api-key and --api-key-file: give one")
		}
		b, err := readLimited(apiKeyFile, 64<<10)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return "", fmt.Errorf("--api-key-file %s: %v", model.Clean(apiKeyFile), err)
		}
		if key = strings.TrimSpace(string(b)); key == "" {
			return "", fmt.Errorf("--api-key-file %s is empty", model.Clean(apiKeyFile))
		}
	}
	model.AddSecret(key)
	return key, nil
}

// nameEndpoints records the endpoints the person named (and registers the
// passwords in their URLs with the scrub).
func nameEndpoints(urls ...string) {
	creds.mu.Lock()
	defer creds.mu.Unlock()
	if creds.named == nil {
		creds.named = map[string]bool{}
	}
	for _, u := range urls {
		u = normalizeURL(u)
		if o := probe.Origin(u); o != "" {
			creds.named[o] = true
		}
		if p, err := url.Parse(u); err == nil && p.User != nil {
			if pw, ok := p.User.Password(); ok {
				model.AddBasicAuth(p.User.Username(), pw)
			}
		}
		for _, s := range urlSecrets(u) {
			model.AddSecret(s)
			if !slices.Contains(creds.secrets, s) {
				creds.secrets = append(creds.secrets, s)
			}
		}
	}
}

// apiKeyFor is the key to send to rawURL ("" none).
func apiKeyFor(rawURL string) (string, error) {
	key, err := givenKey()
	if key != "" || err != nil {
		return key, err
	}
	creds.mu.Lock()
	named := creds.named[probe.Origin(normalizeURL(rawURL))]
	creds.mu.Unlock()
	if named {
		return os.Getenv("OPENAI_API_KEY"), nil
	}
	return "", nil
}
