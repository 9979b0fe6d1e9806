package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxProbeBody caps what a probe reads: identity routes answer a few KB
// (SGLang's /server_info is the largest, tens of KB).
const maxProbeBody = 4 << 20

// HTTPError is an answer with a non-2xx status.
type HTTPError struct {
	URL    string
	Status int
	// Body is the start of the answer, for messages ("Loading model").
	Body string
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("%s answered %d %s", e.URL, e.Status, http.StatusText(e.Status))
	if b := strings.TrimSpace(e.Body); b != "" {
		msg += ": " + oneLine(b, 120)
	}
	return msg
}

// TooLargeError is a body over the read cap.
type TooLargeError struct {
	URL   string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s answered more than %d bytes; stopped reading", e.URL, e.Limit)
}

// DecodeError is an answer that is not the JSON expected.
type DecodeError struct {
	URL string
	Err error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s: not the JSON expected: %v", e.URL, e.Err)
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// Get fetches url with a read cap. A non-2xx answer is an *HTTPError, a body
// over limit a *TooLargeError; transport errors are returned as the client
// gives them (the caller classifies them).
func Get(ctx context.Context, client *http.Client, url, accept string, limit int64) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, resp.Header, err
	}
	if int64(len(body)) > limit {
		return nil, resp.Header, &TooLargeError{URL: url, Limit: limit}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		head := body
		if len(head) > 512 {
			head = head[:512]
		}
		return body, resp.Header, &HTTPError{URL: url, Status: resp.StatusCode, Body: string(head)}
	}
	return body, resp.Header, nil
}

// getJSON fetches and decodes a JSON document.
func getJSON(ctx context.Context, client *http.Client, url string, v any) error {
	body, _, err := Get(ctx, client, url, "application/json", maxProbeBody)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &DecodeError{URL: url, Err: err}
	}
	return nil
}

// getText fetches a short text answer.
func getText(ctx context.Context, client *http.Client, url string) (string, error) {
	body, _, err := Get(ctx, client, url, "", maxProbeBody)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(body)), nil
}

// answered reports whether err is an HTTP answer (any status) or a decode
// error, as opposed to a transport failure: the server is there.
func answered(err error) bool {
	if err == nil {
		return true
	}
	var he *HTTPError
	var te *TooLargeError
	var de *DecodeError
	return errors.As(err, &he) || errors.As(err, &te) || errors.As(err, &de)
}
