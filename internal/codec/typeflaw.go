package codec

import (
	"encoding"
	"reflect"
	"strings"
	"sync"

	"github.com/offloadgo/offload/internal/shmbuf"

	"github.com/vmihailenco/msgpack/v5"
)

// A TypeFlaw is where a value of some type would not cross msgpack
// intact: a field msgpack skips (it arrives zeroed, silently), or a value
// msgpack can't encode or decode. The type alone decides it, so a Pool
// can refuse the task at submission rather than lose data on every call.
type TypeFlaw struct {
	// Path leads from the type to the flawed value, in Go's syntax with
	// [i] for an element, [key] for a map's key and [k] for its value:
	// "opts", "Items[i].x". "" is the type itself.
	Path string
	// Type is the type at Path.
	Type reflect.Type
	// Zeroed says the value is skipped (an unexported field) and arrives
	// as its zero value; otherwise Why says what msgpack can't do.
	Zeroed bool
	Why    string
}

// flaws caches FlawOf per type: reflect.Type → *TypeFlaw (nil: none).
var flaws sync.Map

// FlawOf returns the first flaw of t for msgpack, or nil. Cached per type.
//
// It looks where msgpack looks: through pointers, slices, arrays, maps
// (keys too) and struct fields (embedded ones included), but not into
// fields tagged `msgpack:"-"`, nor fields of no size (struct{}, [0]T),
// which carry nothing; nor into a type that encodes itself
// (msgpack.CustomEncoder or Marshaler, encoding.BinaryMarshaler or
// TextMarshaler, on the type or its pointer; time.Time; a
// *transfer.Buffer). What an interface holds is known only at run time,
// so an interface is taken as it is: msgpack's own errors cover a channel
// in it, but a struct in it with unexported fields loses them.
func FlawOf(t reflect.Type) *TypeFlaw {
	if f, ok := flaws.Load(t); ok {
		return f.(*TypeFlaw)
	}
	f := findFlaw(t, "", map[reflect.Type]bool{})
	flaws.Store(t, f)
	return f
}

var (
	customEncoderType   = reflect.TypeFor[msgpack.CustomEncoder]()
	marshalerType       = reflect.TypeFor[msgpack.Marshaler]()
	binaryMarshalerType = reflect.TypeFor[encoding.BinaryMarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
)

// encodesItself reports whether msgpack hands a value of type t to the
// type's own encoder (as msgpack's getEncoder decides) rather than
// walking it.
func encodesItself(t reflect.Type) bool {
	for _, u := range []reflect.Type{t, reflect.PointerTo(t)} {
		if u.Implements(customEncoderType) || u.Implements(marshalerType) ||
			u.Implements(binaryMarshalerType) || u.Implements(textMarshalerType) {
			return true
		}
	}
	return false
}

// findFlaw is FlawOf's depth-first search from t, at path. seen holds the
// types already searched, which recursive types meet again.
func findFlaw(t reflect.Type, path string, seen map[reflect.Type]bool) *TypeFlaw {
	if seen[t] {
		return nil
	}
	seen[t] = true
	if t.Kind() == reflect.Pointer && shmbuf.IsBufferType(t.Elem()) {
		return nil // msgpack's extension, registered by package transfer
	}
	if shmbuf.IsBufferType(t) {
		return &TypeFlaw{Path: path, Type: t, Why: "a Buffer crosses by pointer: use *transfer.Buffer"}
	}
	if encodesItself(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128, reflect.Uintptr:
		return &TypeFlaw{Path: path, Type: t, Why: "msgpack can't encode a " + t.Kind().String()}
	case reflect.Pointer:
		return findFlaw(t.Elem(), path, seen)
	case reflect.Slice, reflect.Array:
		return findFlaw(t.Elem(), path+"[i]", seen)
	case reflect.Map:
		if f := findFlaw(t.Key(), path+"[key]", seen); f != nil {
			return f
		}
		return findFlaw(t.Elem(), path+"[k]", seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := fieldFlaw(t.Field(i), path, seen); f != nil {
				return f
			}
		}
	}
	return nil
}

// fieldFlaw is findFlaw for the struct field f of the struct at path.
func fieldFlaw(f reflect.StructField, path string, seen map[reflect.Type]bool) *TypeFlaw {
	name, _, _ := strings.Cut(f.Tag.Get("msgpack"), ",")
	if name == "-" || f.Name == "_" || f.Type.Size() == 0 {
		return nil // not sent, or nothing to send
	}
	if path != "" {
		path += "."
	}
	path += f.Name
	switch {
	case f.IsExported():
		return findFlaw(f.Type, path, seen)
	case !f.Anonymous:
		return &TypeFlaw{Path: path, Type: f.Type, Zeroed: true}
	case f.Type.Kind() == reflect.Struct:
		// An embedded struct of an unexported type: msgpack sends its
		// exported fields, and sets them on the other side.
		return findFlaw(f.Type, path, seen)
	}
	// An embedded pointer or non-struct of an unexported type: msgpack
	// encodes it, but reflect won't let the decoder set it.
	return &TypeFlaw{Path: path, Type: f.Type, Why: "msgpack can't set an embedded field of an unexported type when it decodes"}
}
