// Package blobjson is JSON with raw bytes beside it: the values a Go
// program exchanges with a program of another language (pool.Extern
// tasks). A struct may tag one []byte field `offload:"blob"`; its bytes
// travel as they are, outside the JSON (where the field is null), since
// JSON would carry them as base64: a third larger, and encoded and
// decoded on both sides.
package blobjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// Tag is the struct tag, and Value its value, that mark the blob field.
const (
	Tag   = "offload"
	Value = "blob"
)

// Field is where a type keeps its blob.
type Field struct {
	// Index is the field's index in the struct.
	Index int
	// Name is its name in the JSON (its json tag's, or the Go name).
	Name string
	// Ptr says the type is a pointer to the struct.
	Ptr bool
}

// FieldOf finds t's blob field: nil for a type without one. t may be a
// struct or a pointer to one; only its own fields count (not those of an
// embedded struct). It is an error to tag a field that is not []byte, or
// more than one.
func FieldOf(t reflect.Type) (*Field, error) {
	ptr := t.Kind() == reflect.Pointer
	if ptr {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, nil
	}
	var found *Field
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Tag.Get(Tag) != Value {
			continue
		}
		if sf.Type != reflect.TypeFor[[]byte]() {
			return nil, fmt.Errorf("field %s of %v is tagged %s:%q but is %v, not []byte", sf.Name, t, Tag, Value, sf.Type)
		}
		if !sf.IsExported() {
			return nil, fmt.Errorf("field %s of %v is tagged %s:%q but is unexported", sf.Name, t, Tag, Value)
		}
		if found != nil {
			return nil, fmt.Errorf("%v has two fields tagged %s:%q (%s and %s); one at most", t, Tag, Value, t.Field(found.Index).Name, sf.Name)
		}
		found = &Field{Index: i, Name: jsonName(sf), Ptr: ptr}
	}
	return found, nil
}

// jsonName is the field's name in encoding/json's output.
func jsonName(sf reflect.StructField) string {
	name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	if name == "" || name == "-" {
		return sf.Name
	}
	return name
}

// fields caches FieldOf by type; a type whose FieldOf failed maps to its
// error.
var fields sync.Map // reflect.Type → *Field or error

func cached(t reflect.Type) (*Field, error) {
	if v, ok := fields.Load(t); ok {
		if err, ok := v.(error); ok {
			return nil, err
		}
		return v.(*Field), nil
	}
	f, err := FieldOf(t)
	if err != nil {
		fields.Store(t, err)
		return nil, err
	}
	fields.Store(t, f)
	return f, nil
}

// Raw is a value as it crosses, left undecoded: its JSON, and the name
// and bytes of its blob field ("" and none without one). Marshal returns
// a Raw's parts as they are, and Unmarshal into a *Raw keeps them so: a
// worker node passes a program's inputs and outputs on without the Go
// types they were made from.
type Raw struct {
	JSON  []byte
	Field string
	Blob  []byte
}

// Marshal returns v's JSON and, if v's type has a blob field, that
// field's name and bytes; the JSON has null in its place. A Raw is
// returned as it is.
func Marshal(v any) (js []byte, field string, blob []byte, err error) {
	if r, ok := v.(Raw); ok {
		return r.JSON, r.Field, r.Blob, nil
	}
	if v == nil {
		js, err = json.Marshal(v)
		return js, "", nil, err
	}
	f, err := cached(reflect.TypeOf(v))
	if err != nil || f == nil {
		if err == nil {
			js, err = json.Marshal(v)
		}
		return js, "", nil, err
	}
	rv := reflect.ValueOf(v)
	if f.Ptr {
		if rv.IsNil() {
			js, err = json.Marshal(v)
			return js, "", nil, err
		}
		rv = rv.Elem()
	}
	// A copy, with the field emptied: v is the caller's, and stays whole.
	c := reflect.New(rv.Type()).Elem()
	c.Set(rv)
	blob = c.Field(f.Index).Bytes()
	c.Field(f.Index).SetBytes(nil)
	js, err = json.Marshal(c.Interface())
	return js, f.Name, blob, err
}

// Unmarshal decodes js into the value out points to and puts blob into
// its blob field, which field names; with field "" there is no blob. A
// blob for a type without a blob field, or under another name, is an
// error: bytes would be lost. Into a *Raw, the parts are kept as they
// are, not copied.
func Unmarshal(js []byte, field string, blob []byte, out any) error {
	if r, ok := out.(*Raw); ok {
		*r = Raw{JSON: js, Field: field, Blob: blob}
		return nil
	}
	if err := json.Unmarshal(js, out); err != nil {
		return err
	}
	if field == "" {
		return nil
	}
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("blobjson: Unmarshal into a nil or non-pointer value")
	}
	rv = rv.Elem()
	f, err := cached(rv.Type())
	switch {
	case err != nil:
		return err
	case f == nil:
		return fmt.Errorf("a blob (%q) came for %v, which has no field tagged %s:%q", field, rv.Type(), Tag, Value)
	case f.Name != field:
		return fmt.Errorf("a blob came for field %q of %v, whose blob field is %q", field, rv.Type(), f.Name)
	}
	if f.Ptr {
		if rv.IsNil() {
			rv.Set(reflect.New(rv.Type().Elem()))
		}
		rv = rv.Elem()
	}
	rv.Field(f.Index).SetBytes(blob)
	return nil
}
