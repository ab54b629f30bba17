package codec

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/offloadgo/offload/internal/shmbuf"
)

// A receiver refuses a message whose arrays and maps nest deeper than
// shmbuf.MaxDepth (see shmbuf.ValidateMessage), so the codec refuses to
// encode such a value: its sender learns why, rather than the receiver
// failing the call as malformed. Most types can't nest that deep, which
// is decided once per type; only a value whose type is recursive (a
// linked list, a tree), holds an interface, or encodes itself has its
// encoding scanned, as its receiver will scan it.

// ErrTooDeep is a value nested deeper than a receiver decodes.
var ErrTooDeep = fmt.Errorf("value nested more than %d deep (arrays, slices, maps and structs within each other), deeper than a receiver decodes", shmbuf.MaxDepth)

// checkDepth returns ErrTooDeep if encoded, a value's encoding, nests
// deeper than shmbuf.MaxDepth; deep says whether the value's type can
// (mayNestTooDeep), else it is not looked at.
func checkDepth(deep bool, encoded []byte) error {
	if deep && errors.Is(shmbuf.ValidateMessage(encoded), shmbuf.ErrTooDeep) {
		return ErrTooDeep
	}
	return nil
}

// depths caches typeDepth by reflect.Type.
var depths sync.Map // reflect.Type → int

// mayNestTooDeep says whether a value of type t can encode deeper than
// shmbuf.MaxDepth. (factsOf caches it.)
func mayNestTooDeep(t reflect.Type) bool {
	if t == nil {
		return false
	}
	d := typeDepth(t, map[reflect.Type]bool{})
	return d < 0 || d > shmbuf.MaxDepth
}

// typeDepth is how deeply msgpack can nest arrays and maps in a value of
// type t, or -1 if t does not bound it: an interface, a type that writes
// its own msgpack, a recursive type. walking holds the types being walked
// further up, where a recursion shows. It may count a level too many (a
// struct of a registered extension, written flat, counts as a struct),
// never one too few.
func typeDepth(t reflect.Type, walking map[reflect.Type]bool) int {
	if d, ok := depths.Load(t); ok {
		return d.(int)
	}
	if walking[t] {
		return -1
	}
	walking[t] = true
	d := walkDepth(t, walking)
	delete(walking, t)
	// A result is t's own: if it is -1 for a recursion, t is on the cycle.
	depths.Store(t, d)
	return d
}

func walkDepth(t reflect.Type, walking map[reflect.Type]bool) int {
	ptr := reflect.PointerTo(t)
	switch {
	case t.Implements(customEncoderType) || t.Implements(marshalerType) ||
		ptr.Implements(customEncoderType) || ptr.Implements(marshalerType):
		return -1
	case t.Implements(binaryMarshalerType) || t.Implements(textMarshalerType) ||
		ptr.Implements(binaryMarshalerType) || ptr.Implements(textMarshalerType):
		return 0 // a bin or a str
	}
	switch t.Kind() {
	case reflect.Interface:
		return -1
	case reflect.Pointer:
		return typeDepth(t.Elem(), walking)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return 0 // a bin
		}
		return inside(typeDepth(t.Elem(), walking))
	case reflect.Map:
		return inside(deeper(typeDepth(t.Key(), walking), typeDepth(t.Elem(), walking)))
	case reflect.Struct:
		d := 0
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous || f.Tag.Get("msgpack") == "-" {
				continue // msgpack skips it
			}
			d = deeper(d, typeDepth(f.Type, walking))
		}
		return inside(d)
	}
	return 0
}

// deeper is the deeper of two depths, -1 (no bound) deepest.
func deeper(a, b int) int {
	if a < 0 || b < 0 {
		return -1
	}
	return max(a, b)
}

// inside is the depth of a container of values d deep.
func inside(d int) int {
	if d < 0 {
		return -1
	}
	return d + 1
}
