package model

import "time"

// Input is one input to the monitor core (core.Monitor.Apply): the closed
// set Inputs lists. The faces hand every one of them to the core from
// their root (never from a pane that can be hidden), and the recording
// encodes each (a test in recording enumerates Inputs), so replay sees
// what the live core saw.
type Input interface{ input() }

func (Scrape) input()       {}
func (Sample) input()       {}
func (LogLine) input()      {}
func (LogLines) input()     {}
func (Event) input()        {}
func (GPUSnapshot) input()  {}
func (PortOwner) input()    {}
func (Origin) input()       {}
func (Behaviour) input()    {}
func (BenchDone) input()    {}
func (Ack) input()          {}
func (Silence) input()      {}
func (WindowChange) input() {}
func (Batch) input()        {}
func (HostReading) input()  {}
func (Launch) input()       {}

// Inputs is one of each Input, for the tests that enumerate the set.
func Inputs() []Input {
	return []Input{Scrape{}, Sample{}, LogLine{}, LogLines{}, Event{}, GPUSnapshot{}, PortOwner{}, Origin{},
		Behaviour{}, BenchDone{}, Ack{}, Silence{}, WindowChange{}, Batch{}, HostReading{}, Launch{}}
}

// BenchDone is a finished benchmark as the core takes it: its numbers for
// the rules and its summary for the run it measured.
type BenchDone struct {
	Bench Bench    `json:"bench"`
	Run   RunBench `json:"run"`
}

// Ack is a person acknowledging a finding (a planned redeploy) for the
// endpoint's current run, or taking that back (Undo).
type Ack struct {
	Time     time.Time `json:"time"`
	Endpoint string    `json:"endpoint"`
	Finding  string    `json:"finding"`
	Undo     bool      `json:"undo,omitempty"`
}

// Silence is a person silencing a rule until a time (zero Until lifts it).
type Silence struct {
	Time  time.Time `json:"time"`
	Rule  string    `json:"rule"`
	Until time.Time `json:"until"`
}

// WindowChange is the window for rates and percentiles changing.
type WindowChange struct {
	Time   time.Time     `json:"time"`
	Window time.Duration `json:"window"`
}

// Bench is a benchmark's client-side numbers, in vllm bench serve's terms
// (milliseconds), plus the server's view over the same window when the
// monitor scraped it. Zero-valued fields are absent.
type Bench struct {
	URL       string
	Start     time.Time
	End       time.Time
	Completed int
	Failed    int

	TTFTp50, TTFTp99 Opt // client, ms
	ITLp50, ITLp99   Opt // client, ms
	TPOTp50          Opt // client, ms

	// ServerTTFTp50 / ServerITLp50 are the server's own estimates over the
	// benchmark window, ms.
	ServerTTFTp50, ServerITLp50 Opt
	// ServerRequests is how many first tokens the server's TTFT histogram
	// counted over the same window: more than the benchmark sent means
	// other traffic is mixed into the server's numbers.
	ServerRequests Opt
	// Cancelled counts requests in flight when the run was stopped: a
	// stopped run's window is not what it set out to measure.
	Cancelled int

	// Responses the client judged bad: Empty streams (the benchmark counts
	// them as failures), and completed ones whose text is Blank (white
	// space only), echoes the prompt or repeats itself (each completed
	// answer in at most one of the three).
	Empty, Blank, Echoed, Repetitive int
}
