package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/llmtop/llmtop/model"
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

// nameEndpoints registers the credentials in the URLs of the endpoints the
// person named with the scrub (model.AddSecret: every output hides them).
func nameEndpoints(urls ...string) {
	for _, u := range urls {
		u = normalizeURL(u)
		if p, err := url.Parse(u); err == nil && p.User != nil {
			if pw, ok := p.User.Password(); ok {
				model.AddBasicAuth(p.User.Username(), pw)
			}
		}
		for _, s := range urlSecrets(u) {
			model.AddSecret(s)
		}
	}
}

// apiKeyFor is the key to send to rawURL ("" none): the key given, or
// $OPENAI_API_KEY when the person named the endpoint (the face knows:
// its arguments, config and this machine's ports are named, a Prometheus
// target is not).
func apiKeyFor(rawURL string, named bool) (string, error) {
	key, err := givenKey()
	if key != "" || err != nil || !named {
		return key, err
	}
	nameEndpoints(rawURL)
	return os.Getenv("OPENAI_API_KEY"), nil
}

// tokenFor is the bearer token --token-file gives rawURL (URL=FILE, the URL
// as the endpoint is named), and whether one does. The token is registered
// with the scrub; a file that cannot be read, or is empty, is an error.
func tokenFor(rawURL string, specs []string) (string, bool, error) {
	want := strings.TrimRight(normalizeURL(rawURL), "/")
	for _, sp := range specs {
		u, file, ok := strings.Cut(sp, "=")
		if !ok || u == "" || file == "" {
			return "", false, fmt.Errorf("--token-file %q: want URL=FILE", model.Clean(sp))
		}
		if strings.TrimRight(normalizeURL(u), "/") != want {
			continue
		}
		b, err := readLimited(file, 64<<10)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return "", false, fmt.Errorf("--token-file %s: %v", model.Clean(file), err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", false, fmt.Errorf("--token-file %s is empty", model.Clean(file))
		}
		model.AddSecret(tok)
		return tok, true, nil
	}
	return "", false, nil
}
