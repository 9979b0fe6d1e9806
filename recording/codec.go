package recording

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/llmtop/llmtop/model"
)

// encode turns a message into its kind and JSON. Times are written in UTC
// so a recording reads back the same wherever it is replayed. ok is false
// for a message that is not recorded.
func encode(msg any) (kind string, v any, ok bool) {
	switch m := msg.(type) {
	case model.Scrape:
		return kindScrape, toWireScrape(m), true
	case model.GPUSnapshot:
		m.Time = m.Time.UTC()
		return kindGPU, m, true
	case model.LogLine:
		return kindLog, utcLine(m), true
	case model.LogLines:
		out := make(model.LogLines, len(m))
		for i, l := range m {
			out[i] = utcLine(l)
		}
		return kindLogs, out, true
	case model.Sample:
		return kindSample, toWireSample(m), true
	case model.Event:
		m.Time = m.Time.UTC()
		return kindEvent, m, true
	case model.PortOwner:
		m.Time = m.Time.UTC()
		return kindPort, m, true
	case model.HostReading:
		m.Time = m.Time.UTC()
		return kindHost, m, true
	case model.Launch:
		m.Time = m.Time.UTC()
		return kindLaunch, m, true
	case model.BenchDone:
		m.Bench.Start, m.Bench.End, m.Run.Time = m.Bench.Start.UTC(), m.Bench.End.UTC(), m.Run.Time.UTC()
		return kindBench, m, true
	case model.Origin:
		return kindOrigin, m, true
	case model.Behaviour:
		// Without the raw exchanges (the probe overlay's x view): the
		// core does not keep them either, and they hold prompts.
		m.Raw = nil
		m.Time = m.Time.UTC()
		return kindProbe, m, true
	case model.Ack:
		m.Time = m.Time.UTC()
		return kindAck, m, true
	case model.Silence:
		m.Time, m.Until = m.Time.UTC(), m.Until.UTC()
		return kindSilence, m, true
	case model.WindowChange:
		m.Time = m.Time.UTC()
		return kindWindow, m, true
	case model.Batch:
		// A fleet's refresh, kept whole: the replay applies it at once
		// and runs the rules once, as the live core did.
		ls := make([]line, 0, len(m))
		for _, x := range m {
			k, v, ok := encode(x)
			if !ok {
				continue
			}
			raw, err := json.Marshal(v)
			if err != nil {
				continue
			}
			ls = append(ls, line{K: k, M: raw})
		}
		return kindBatch, ls, true
	case Scenario:
		return kindScenario, m, true
	case Note:
		return kindNote, m, true
	case Tick:
		return kindTick, nil, true
	}
	return "", nil, false
}

func utcLine(l model.LogLine) model.LogLine {
	l.Time = l.Time.UTC()
	if l.Event != nil {
		e := *l.Event
		e.Time = e.Time.UTC()
		l.Event = &e
	}
	return l
}

// errUnknownKind marks a record this llmtop does not know (written by a
// newer one): the reader skips it with a note.
type errUnknownKind string

func (e errUnknownKind) Error() string { return fmt.Sprintf("unknown record kind %q", string(e)) }

// decode turns a line back into a record.
func decode(l line) (Record, error) {
	r := Record{Time: fromUnixNano(l.T)}
	var err error
	switch l.K {
	case kindScrape:
		var w wireScrape
		err = json.Unmarshal(l.M, &w)
		r.Msg = w.scrape()
	case kindSample:
		var w wireSample
		err = json.Unmarshal(l.M, &w)
		r.Msg = w.sample()
	case kindGPU:
		r.Msg, err = decodeAs[model.GPUSnapshot](l.M)
	case kindLog:
		r.Msg, err = decodeAs[model.LogLine](l.M)
	case kindLogs:
		r.Msg, err = decodeAs[model.LogLines](l.M)
	case kindEvent:
		r.Msg, err = decodeAs[model.Event](l.M)
	case kindPort:
		r.Msg, err = decodeAs[model.PortOwner](l.M)
	case kindHost:
		r.Msg, err = decodeAs[model.HostReading](l.M)
	case kindLaunch:
		r.Msg, err = decodeAs[model.Launch](l.M)
	case kindBench:
		r.Msg, err = decodeAs[model.BenchDone](l.M)
	case kindOrigin:
		r.Msg, err = decodeAs[model.Origin](l.M)
	case kindProbe:
		r.Msg, err = decodeAs[model.Behaviour](l.M)
	case kindAck:
		r.Msg, err = decodeAs[model.Ack](l.M)
	case kindSilence:
		r.Msg, err = decodeAs[model.Silence](l.M)
	case kindWindow:
		r.Msg, err = decodeAs[model.WindowChange](l.M)
	case kindBatch:
		var ls []line
		if err = json.Unmarshal(l.M, &ls); err == nil {
			b := make(model.Batch, 0, len(ls))
			for _, x := range ls {
				x.T = l.T
				xr, xerr := decode(x)
				if xerr != nil {
					err = xerr
					break
				}
				if in, ok := xr.Msg.(model.Input); ok {
					b = append(b, in)
				}
			}
			r.Msg = b
		}
	case kindScenario:
		r.Msg, err = decodeAs[Scenario](l.M)
	case kindNote:
		r.Msg, err = decodeAs[Note](l.M)
	case kindTick:
		r.Msg = Tick{}
	default:
		return r, errUnknownKind(l.K)
	}
	if err != nil {
		return r, fmt.Errorf("%s record at %s: %w", l.K, r.Time.Format(time.RFC3339), err)
	}
	return r, nil
}

func decodeAs[T any](b []byte) (T, error) {
	var v T
	err := json.Unmarshal(b, &v)
	return v, err
}
