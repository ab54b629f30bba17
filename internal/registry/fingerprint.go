package registry

import (
	"hash/fnv"
	"io"
	"reflect"
	"strconv"
)

// Fingerprint hashes the shape of a task's input and output types as they
// cross a process or a network: kinds, named types' paths, struct fields'
// names, msgpack tags and types, recursively. Two binaries that agree on
// it decode each other's values as they meant them; a node built from a
// different version of a task gets another fingerprint and refuses the
// call rather than decoding garbage.
func Fingerprint(in, out reflect.Type) uint64 {
	h := fnv.New64a()
	seen := map[reflect.Type]int{}
	describe(h, in, seen)
	io.WriteString(h, "->")
	describe(h, out, seen)
	return h.Sum64()
}

// describe writes t's shape to w; a type met again is written as a back
// reference, so recursive types terminate.
func describe(w io.Writer, t reflect.Type, seen map[reflect.Type]int) {
	if n, ok := seen[t]; ok {
		io.WriteString(w, "@"+strconv.Itoa(n))
		return
	}
	seen[t] = len(seen)
	io.WriteString(w, t.Kind().String()+"("+t.PkgPath()+"."+t.Name()+")")
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice:
		describe(w, t.Elem(), seen)
	case reflect.Array:
		io.WriteString(w, "["+strconv.Itoa(t.Len())+"]")
		describe(w, t.Elem(), seen)
	case reflect.Map:
		describe(w, t.Key(), seen)
		describe(w, t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			io.WriteString(w, "{"+f.Name+" "+strconv.Quote(string(f.Tag))+" ")
			describe(w, f.Type, seen)
			io.WriteString(w, "}")
		}
	}
}
