package recording

import (
	"reflect"

	"github.com/llmtop/llmtop/model"
)

// A recording is a file from outside: it may have been written by another
// llmtop, edited, or crafted. Live data is cleaned by each source as it
// arrives (model.Clean, model.SanitizeLine); what a recording holds is
// cleaned the same way as it is read, so a replay draws nothing a live
// monitor would not (a log line with a cursor move, a model id with a
// title change).

// cleaned returns v with every string inside it (struct fields, slice
// elements, map keys and values, pointed-to values) passed through
// model.Clean. Plain strings come back unchanged, and so does the shape
// (nil stays nil).
func cleaned[T any](v T) T {
	rv := reflect.ValueOf(&v).Elem()
	cleanValue(rv, 0)
	return v
}

// cleanValue cleans the addressable value v in place.
func cleanValue(v reflect.Value, depth int) {
	if depth > 32 { // JSON-decoded values have no cycles; a bound all the same
		return
	}
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			if s := v.String(); s != "" {
				if c := model.Clean(s); c != s {
					v.SetString(c)
				}
			}
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Field(i); f.CanSet() {
				cleanValue(f, depth+1)
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			cleanValue(v.Elem(), depth+1)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes are not text
		}
		for i := 0; i < v.Len(); i++ {
			cleanValue(v.Index(i), depth+1)
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			cleanValue(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.IsNil() || !v.CanSet() {
			return
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		it := v.MapRange()
		for it.Next() {
			k := reflect.New(v.Type().Key()).Elem()
			k.Set(it.Key())
			cleanValue(k, depth+1)
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			cleanValue(e, depth+1)
			out.SetMapIndex(k, e)
		}
		v.Set(out)
	case reflect.Interface:
		if v.IsNil() || !v.CanSet() {
			return
		}
		e := reflect.New(v.Elem().Type()).Elem()
		e.Set(v.Elem())
		cleanValue(e, depth+1)
		v.Set(e)
	}
}
