package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/term"

	"github.com/llmtop/llmtop/beat"
	"github.com/llmtop/llmtop/tui"
)

// The full-screen faces (the monitor, the replay) draw through tui.Screen,
// a line writer, with Bubble Tea reading the keyboard and mouse and running
// the model but not rendering (see tui/screen.go for why). Here is what
// Bubble Tea's renderer did besides drawing: raw mode, the alternate
// screen, the hidden cursor, mouse reporting, the window title, the colour
// profile, the size and its changes.
//
// LLMTOP_RENDERER=bubbletea brings Bubble Tea's own renderer back (a way
// out should a terminal disagree with the line writer).

// screenIO is the terminal a face runs in.
type screenIO struct {
	in  *os.File  // read by Bubble Tea; put in raw mode here (nil: none)
	out io.Writer // frames and modes are written here
	fd  *os.File  // the output's file, for its size and colour profile
}

// screenProgram builds the face's program and returns it with the function
// that runs it to the end and leaves the terminal as it found it.
func screenProgram(m *tui.Model, opts []tea.ProgramOption, t screenIO, noColor, noMouse bool) (*tea.Program, func() error) {
	if os.Getenv("LLMTOP_RENDERER") == "bubbletea" {
		// 10 frames a second at most: data comes once per interval and
		// keys show within 100 ms.
		opts = append(opts, tea.WithFPS(10))
		if noColor {
			opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
		}
		p := tea.NewProgram(m, opts...)
		return p, func() error { _, err := p.Run(); return err }
	}
	profile := colorprofile.Detect(t.fd, os.Environ())
	if noColor {
		profile = colorprofile.Ascii
	}
	// The theme is ANSI-256 indexes (tui/theme.go) and outside text has no
	// colour (model.Clean): a 256-colour or truecolour terminal takes the
	// frames as they are, others get them through the downsampler.
	var frames io.Writer = t.out
	if profile < colorprofile.ANSI256 {
		frames = &colorprofile.Writer{Forward: t.out, Profile: profile}
	}
	scr := tui.NewScreen(frames)
	m.UseScreen(scr)
	// One tick a second: Bubble Tea's ticker now only sends its queries
	// (the background colour for theme "auto").
	opts = append(opts, tea.WithoutRenderer(), tea.WithFPS(1), tea.WithColorProfile(profile))
	p := tea.NewProgram(m, opts...)
	run := func() error {
		if t.in != nil && term.IsTerminal(t.in.Fd()) {
			st, err := term.MakeRaw(t.in.Fd())
			if err != nil {
				return fmt.Errorf("putting the terminal in raw mode: %w", err)
			}
			defer func() { _ = term.Restore(t.in.Fd(), st) }()
		}
		_, _ = io.WriteString(t.out, enterScreen(noMouse))
		defer func() { _, _ = io.WriteString(t.out, leaveScreen(noMouse)) }()
		go scr.Run()
		defer scr.Close()
		stop := watchSize(t.fd, p)
		defer stop()
		// Bubble Tea's ticker (it sends the queries, once a second) has the
		// phase of p.Run: started on a whole second it ticks on the beat
		// grid (package beat), in the wake-up of the scrape, the log's poll
		// and the screen's clock, not in one of its own (at most a second's
		// wait before the first frame, while the first scrape is under way).
		time.Sleep(beat.Until(time.Now(), time.Second))
		_, err := p.Run()
		return err
	}
	return p, run
}

// enterScreen: the alternate screen, no cursor, the window title, and the
// mouse (buttons, motion while pressed, SGR coordinates) unless turned off.
func enterScreen(noMouse bool) string {
	s := "\x1b[?1049h\x1b[?25l\x1b]2;llmtop\x07"
	if !noMouse {
		s += "\x1b[?1002h\x1b[?1006h"
	}
	return s
}

// leaveScreen undoes enterScreen.
func leaveScreen(noMouse bool) string {
	s := ""
	if !noMouse {
		s += "\x1b[?1006l\x1b[?1002l"
	}
	return s + "\x1b[0m\x1b[?25h\x1b[?1049l"
}

// watchSize sends the terminal's size now and after every change
// (SIGWINCH); stop ends the watch. A size it cannot read is 80×24.
func watchSize(f *os.File, p *tea.Program) (stop func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGWINCH)
	done := make(chan struct{})
	send := func() {
		w, h := 80, 24
		if f != nil {
			if cw, ch, err := term.GetSize(f.Fd()); err == nil && cw > 0 && ch > 0 {
				w, h = cw, ch
			}
		}
		p.Send(tea.WindowSizeMsg{Width: w, Height: h})
	}
	go func() {
		send()
		for {
			select {
			case <-sig:
				send()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
	}
}
