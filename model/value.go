package model

import (
	"encoding/json"
	"math"
	"strconv"
)

// Opt is a number that may be absent. Absent means "not exposed by this
// engine" or "no data in the window" — never zero.
type Opt struct {
	V  float64
	OK bool
}

// Some returns a present value. NaN and ±Inf are treated as absent: an engine
// that reports NaN has not told us a number.
func Some(v float64) Opt {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Opt{}
	}
	return Opt{V: v, OK: true}
}

// None is the absent value.
var None = Opt{}

// Or returns the value, or def when absent.
func (o Opt) Or(def float64) float64 {
	if o.OK {
		return o.V
	}
	return def
}

// Scale multiplies a present value; absent stays absent.
func (o Opt) Scale(f float64) Opt {
	if !o.OK {
		return o
	}
	return Some(o.V * f)
}

// MarshalJSON writes null for an absent value.
func (o Opt) MarshalJSON() ([]byte, error) {
	if !o.OK {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, round(o.V, 6), 'f', -1, 64), nil
}

// UnmarshalJSON reads null as absent.
func (o *Opt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = Opt{}
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*o = Some(v)
	return nil
}

// round keeps JSON output readable without losing meaningful precision:
// sig significant digits, but never a digit of the whole part lost (a
// count of 7 400 757 or 85 899 345 920 bytes is written whole) and
// fractions kept to a thousandth. Whole numbers are exact.
func round(v float64, sig int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return v
	}
	if whole := int(math.Floor(math.Log10(math.Abs(v)))) + 1; whole+3 > sig {
		sig = whole + 3
	}
	s := strconv.FormatFloat(v, 'g', sig, 64)
	r, _ := strconv.ParseFloat(s, 64)
	return r
}
