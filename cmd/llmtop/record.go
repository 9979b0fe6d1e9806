package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmtop/llmtop/beat"
	"github.com/llmtop/llmtop/config"
	"github.com/llmtop/llmtop/diagnosis"
	"github.com/llmtop/llmtop/model"
	"github.com/llmtop/llmtop/recording"
	"github.com/llmtop/llmtop/tui"
)

// --record FILE: every message the core receives is teed into a recording
// (docs/recording.md), which `llmtop replay`, `diagnose --from` and
// `snapshot --from` feed into a fresh core later.

var recordFlags struct {
	path string
}

func init() {
	addRecordFlag(root.Flags())
}

// addRecordFlag gives a command that drives a core (the monitor, demo,
// diagnose) the --record flag.
func addRecordFlag(fs *pflag.FlagSet) {
	fs.StringVar(&recordFlags.path, "record", "", "record everything the monitor receives into `FILE` (a new file; replay it with `llmtop replay FILE`, see docs/recording.md)")
}

// recordSecrets are the strings that must never reach a recording: the
// API key (flag, file or $OPENAI_API_KEY) and the credentials in the
// endpoints' URLs (password, secret-looking query values such as
// ?token=…), which every record carries as REDACTED (as every live output
// prints them); the header lists the URLs redacted (recordHeader), user
// names included.
func recordSecrets(urls []string) []string {
	nameEndpoints(urls...)
	key, _ := givenKey()
	out := []string{key, os.Getenv("OPENAI_API_KEY")}
	for _, u := range urls {
		out = append(out, urlSecrets(normalizeURL(u))...)
	}
	return out
}

// urlSecrets are the credentials a URL carries.
func urlSecrets(raw string) []string {
	p, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	if p.User != nil {
		if pw, ok := p.User.Password(); ok {
			out = append(out, pw)
			// and as the URL spells it (percent-encoded)
			if _, enc, ok := strings.Cut(p.User.String(), ":"); ok {
				out = append(out, enc)
			}
		}
	}
	for name, vs := range p.Query() {
		if model.RedactURL("http://h/?"+url.QueryEscape(name)+"=x") != "http://h/?"+url.QueryEscape(name)+"=x" {
			out = append(out, vs...) // a name the redaction takes for a secret's
		}
	}
	return out
}

// recorder is the composition root's tee into a recording; a nil
// *recorder records nothing, so the faces call it unconditionally.
type recorder struct {
	path string
	r    *recording.Recorder
	w    *recording.Writer
}

// openRecording starts --record's file, or with the config's `record =
// true` (auto, nil for faces that do not take it) a rotating one in the
// state directory; nil when neither. ticks writes the clock once a second
// (the monitor's rules run on it); a face that runs its rules on its own
// clock records recording.Tick itself.
func openRecording(h recordSpec, ticks bool, auto *config.RecordConfig) (*recorder, error) {
	if recordFlags.path == "" {
		if auto != nil && auto.Enabled && !h.Simulated {
			return openStateRecording(h, *auto, ticks)
		}
		return nil, nil
	}
	h.Llmtop = version
	if h.Started.IsZero() {
		h.Started = time.Now()
	}
	w, err := createRecording(recordFlags.path, h.Header, h.secrets...)
	if err != nil {
		return nil, err
	}
	return &recorder{path: recordFlags.path, w: w, r: recording.NewRecorder(w, recording.RecorderOptions{Ticks: ticks})}, nil
}

// recordSpec is a recording's header and the secrets none of its records
// may hold (recordSecrets of the endpoints' real URLs: the header has
// them redacted).
type recordSpec struct {
	recording.Header
	secrets []string
}

func recordHeader(face string, urls []string, interval, window time.Duration, cfg diagnosis.Config, simulated bool) recordSpec {
	ids := make([]string, len(urls))
	for i, u := range urls {
		ids[i] = model.RedactURL(u) // as the records name them
	}
	return recordSpec{Header: recording.Header{Face: face, Started: time.Now(), Endpoints: ids, Interval: recording.Duration(interval),
		Window: recording.Duration(window), Diagnosis: &cfg, Simulated: simulated}, secrets: recordSecrets(urls)}
}

// file is where the recording goes ("" when there is none).
func (r *recorder) file() string {
	if r == nil {
		return ""
	}
	return r.path
}

// record queues msg, stamped now. The TUI's own message types become the
// recording's.
func (r *recorder) record(msg any) {
	if r == nil {
		return
	}
	r.r.Record(recordable(msg))
}

// recordAt queues msg stamped t.
func (r *recorder) recordAt(t time.Time, msg any) {
	if r == nil {
		return
	}
	r.r.RecordAt(t, recordable(msg))
}

func recordable(msg any) any {
	if sc, ok := msg.(tui.ScenarioMsg); ok {
		return recording.Scenario{Name: sc.Name, Elapsed: sc.Elapsed, Length: sc.Length}
	}
	return msg
}

// tee wraps a source's send so that what it sends is recorded first.
func (r *recorder) tee(send func(any)) func(any) {
	if r == nil {
		return send
	}
	return func(msg any) {
		r.record(msg)
		send(msg)
	}
}

// input records what the screen itself handed the core: a benchmark's or a
// probe's result, an acknowledgement, a silence, a window change
// (tui.Options.OnInput).
func (r *recorder) input(in model.Input) { r.record(in) }

// status lists the recording among the monitor's sources ("record ok"),
// and watch says there when writing it fails.
func (r *recorder) status(statuses map[string]string) {
	if r != nil {
		statuses["record"] = ""
	}
}

func (r *recorder) watch(ctx context.Context, send func(any)) {
	if r == nil {
		return
	}
	// once a second on the beat grid, in the scrape's wake-up
	t := time.NewTimer(beat.Until(time.Now(), time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			t.Reset(beat.Until(time.Now(), time.Second))
			if err := r.r.Err(); err != nil {
				send(tui.SourceStatusMsg{Name: "record", Err: err.Error() + " (" + r.path + ")"})
				return
			}
		}
	}
}

// close ends the recording and says where it is (or why it is not whole).
func (r *recorder) close(out io.Writer) error {
	if r == nil {
		return nil
	}
	err := r.r.Close()
	if err != nil {
		fmt.Fprintf(out, "llmtop: recording %s: %v (what was written before it is readable)\n", r.path, err)
		return err
	}
	fmt.Fprintf(out, "llmtop: recorded %d messages to %s; replay it with: llmtop replay %s\n", r.r.Records(), r.path, r.path)
	return nil
}

// readStream opens a recording to read as a stream (its memory does not
// grow with its length); the caller prints its notes when done.
func readStream(path string) (*recording.Reader, error) {
	return recording.Open(path)
}

// printNotes says on errOut what the reader skipped or could not read (a
// torn end, skipped records, times that ran back).
func printNotes(errOut io.Writer, path string, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(errOut, "llmtop: %s: %s\n", path, n)
	}
}

// noRecords is the error of a recording with a header and nothing after.
func noRecords(path string) error {
	return fmt.Errorf("%s holds no records (it was cut before its first second)", path)
}
