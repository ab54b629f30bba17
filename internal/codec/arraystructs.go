package codec

import "reflect"

// Both ends of a worker connection are the same binary, so a struct can
// go as an array of its fields in declaration order instead of a map from
// their names: each row of a []Order then carries its values only, not
// its field names (bench/orders BenchmarkMsgpackRows compares the two).
// The decoder takes either form into a struct, since the field list is
// the same on both sides.
//
// Only into a struct, though: a struct held by an interface (a field of
// type any, a map[string]any, an Out of type any) decodes as the generic
// value its encoding looks like, which is a map[string]any for a map but
// a []any for an array. Types that can hold an interface keep the map
// form, so what a task sees of such values does not change.

// arrayStructs says whether v's structs can be array-encoded: whether no
// value msgpack would encode from v's type is held by an interface.
func arrayStructs(v any) bool { return factsOf(v).array }

// reachesInterface reports whether a value of type t can contain an
// interface value msgpack would encode: through pointers, slices, arrays,
// maps (keys too) and the struct fields msgpack encodes (exported ones and
// embedded ones, but not those tagged "-"). seen holds the types being
// walked, for recursive types. It errs on the side of yes: a type with its
// own encoder is walked like any other.
func reachesInterface(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false // being walked further up: its answer comes from there
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return reachesInterface(t.Elem(), seen)
	case reflect.Map:
		return reachesInterface(t.Key(), seen) || reachesInterface(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous || f.Tag.Get("msgpack") == "-" {
				continue // msgpack skips it
			}
			if reachesInterface(f.Type, seen) {
				return true
			}
		}
	}
	return false
}
