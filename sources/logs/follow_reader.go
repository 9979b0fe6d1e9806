package logs

import (
	"context"
	"io"
	"sync"

	"github.com/llmtop/llmtop/model"
)

// FollowReader feeds r's lines to src until r ends or ctx is done (the
// demo's in-process simulator log). A reader that blocks is abandoned, not
// closed, when ctx ends: closing is its owner's job.
func FollowReader(ctx context.Context, name string, r io.Reader, src *Source) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		readAll(r, src)
	}()
	select {
	case <-ctx.Done():
	case <-done:
		if ctx.Err() == nil {
			src.notice("log_ended", model.SevInfo, "%s ended", name)
		}
	}
}

// Input names one log to follow: a file, a shell command, or a reader.
type Input struct {
	File    string
	Command string
	Reader  io.Reader
	// Name labels a Reader in notices ("simulator log").
	Name string
	// Launched: File is the log of the engine llmtop itself launched
	// (llmtop run, tune), written since: none of it is history.
	Launched bool
	// Stamps says how a command's lines tell when they were logged,
	// which is how what it prints from before it started (docker logs
	// --tail 200) is told from what happens now.
	Stamps Stamps
}

// Stamps is how a command's lines carry their time.
type Stamps int

const (
	// StampsNone: no time llmtop can trust (a --log-cmd): every line is
	// taken as logged when it arrives.
	StampsNone Stamps = iota
	// StampsPrefix: docker and kubectl logs --timestamps, RFC 3339 with
	// a zone in front of every line, cut before the line is shown.
	StampsPrefix
	// StampsLocal: the line's own stamp is in llmtop's zone (journalctl's
	// short format prints the local time of the machine llmtop runs on).
	StampsLocal
)

// Start follows in and delivers through send until ctx is done; it returns
// at once. The channel it returns closes once everything Start began has
// stopped after ctx ended: for a command, once its process group is gone
// (SIGTERM, then SIGKILL after CommandOptions.Grace, 2 s). A caller that
// exits when ctx ends waits for it, or the command outlives llmtop.
func Start(ctx context.Context, in Input, opts Options, send func(any)) <-chan struct{} {
	opts.StampPrefix = in.Stamps == StampsPrefix
	src := NewSource(opts, send)
	var wg sync.WaitGroup
	wg.Go(func() { src.Run(ctx) })
	switch {
	case in.File != "":
		wg.Go(func() { FollowFile(ctx, in.File, FileOptions{NoHistory: in.Launched, Beat: opts.Beat}, src) })
	case in.Command != "":
		wg.Go(func() { FollowCommand(ctx, in.Command, CommandOptions{Stamped: in.Stamps != StampsNone}, src) })
	case in.Reader != nil:
		wg.Go(func() { FollowReader(ctx, in.Name, in.Reader, src) })
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}
