package main

import (
	"fmt"
	"os"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
)

// The monitor notices by itself that its terminal went away. SIGHUP goes to
// the terminal's session leader only: when llmtop is a child of another
// program (`make run`, a script), that program gets the hangup and llmtop
// does not. The terminal then answers every read with EOF (or EIO) and
// every write with EIO. Bubble Tea takes an EOF on its input for a quiet
// end of input and keeps rendering into the void, so llmtop watches the
// reads and writes itself: the first one that fails ends the monitor as q
// does.

// terminalFile is the monitor's terminal as Bubble Tea reads and writes it.
// It keeps the file's descriptor and name, so Bubble Tea still puts it in
// raw mode, reads its size and cancels its reads.
type terminalFile struct {
	*os.File
	gone *terminalGone
}

func (f terminalFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	if err != nil {
		f.gone.report(fmt.Errorf("reading the terminal: %w", err))
	}
	return n, err
}

func (f terminalFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if err != nil {
		f.gone.report(fmt.Errorf("writing to the terminal: %w", err))
	}
	return n, err
}

// terminalGone calls lost once, with the first failure.
type terminalGone struct {
	once sync.Once
	lost func(error)
}

func (g *terminalGone) report(err error) { g.once.Do(func() { g.lost(err) }) }

// terminalOptions are the Bubble Tea options that read and write the
// terminal through terminalFiles reporting to lost. Input is stdin when it
// is a terminal, else the controlling terminal (as Bubble Tea would pick);
// without one, Bubble Tea's default stays and says why. close releases a
// terminal opened here.
func terminalOptions(lost func(error)) (opts []tea.ProgramOption, t screenIO, close func()) {
	g := &terminalGone{lost: lost}
	close = func() {}
	out := terminalFile{os.Stdout, g}
	opts = []tea.ProgramOption{tea.WithOutput(out)}
	t = screenIO{out: out, fd: os.Stdout}
	in := os.Stdin
	if !term.IsTerminal(in.Fd()) {
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return opts, t, close
		}
		in, close = tty, func() { _ = tty.Close() }
	}
	t.in = in
	return append(opts, tea.WithInput(terminalFile{in, g})), t, close
}
