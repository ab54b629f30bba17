package shmbuf

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"
)

// typeInfo is what the walkers need to know about a type, computed once.
type typeInfo struct {
	// typ is the type described, for recent's slots to be checked against.
	typ reflect.Type
	// buffer: the type is a *Buffer (a pointer to a bufferShaped struct).
	buffer bool
	// holds: a value may reach a *Buffer (interfaces may hold anything).
	holds bool
	// bad, if set, says why no value of the type can cross a process.
	bad string
	// refs: a value may reach memory that Copy must duplicate (pointers,
	// slices, maps, interfaces); without it a plain assignment is a copy.
	refs bool
	// fields are the indices of the struct fields worth walking.
	fields []int
}

// typeInfos caches typeInfo per reflect.Type, like encoding/json caches its
// codecs: derived from types alone, so sharing it process-wide is safe and
// makes MoveAt on a type without Buffers cost a map lookup. A program has
// few types, so the map is copied on write and read without a lock (a plain
// map read is cheaper than sync.Map's).
var (
	typeInfos   atomic.Pointer[map[reflect.Type]*typeInfo]
	typeInfosMu sync.Mutex
)

// recent is a direct-mapped cache in front of typeInfos: the hot path of
// MoveAt on a plain struct is one atomic load and a compare instead of
// an interface-keyed map lookup (tens of nanoseconds). A slot holds the
// typeInfo itself, so two hot types that share a slot cost map lookups,
// never an allocation.
var recent [256]atomic.Pointer[typeInfo]

// infoOf returns t's typeInfo.
func infoOf(t reflect.Type) *typeInfo {
	// A reflect.Type is an interface whose data word is the *rtype; its
	// address picks the slot (types are at least 8-byte aligned).
	slot := &recent[((*[2]uintptr)(unsafe.Pointer(&t))[1]>>3)%uintptr(len(recent))]
	if info := slot.Load(); info != nil && info.typ == t {
		return info
	}
	info := lookupInfo(t)
	slot.Store(info)
	return info
}

// lookupInfo returns t's typeInfo from typeInfos, computing it once.
func lookupInfo(t reflect.Type) *typeInfo {
	if m := typeInfos.Load(); m != nil {
		if info, ok := (*m)[t]; ok {
			return info
		}
	}
	info := computeInfo(t)
	typeInfosMu.Lock()
	defer typeInfosMu.Unlock()
	old := typeInfos.Load()
	if old != nil {
		if known, ok := (*old)[t]; ok {
			return known
		}
	}
	m := make(map[reflect.Type]*typeInfo, 1+lenOf(old))
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[t] = info
	typeInfos.Store(&m)
	return info
}

func lenOf(m *map[reflect.Type]*typeInfo) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

// computeInfo builds t's typeInfo, the struct field list included.
func computeInfo(t reflect.Type) *typeInfo {
	info := analyse(t)
	info.typ = t
	if t.Kind() == reflect.Struct && (info.holds || info.refs) {
		for i := range t.NumField() {
			if f := t.Field(i); walked(f) && (infoOf(f.Type).holds || infoOf(f.Type).refs) {
				info.fields = append(info.fields, i)
			}
		}
	}
	return info
}

// walked reports whether the walkers look at a struct field: the fields
// msgpack encodes, i.e. exported ones not tagged `msgpack:"-"`.
func walked(f reflect.StructField) bool {
	return f.IsExported() && f.Tag.Get("msgpack") != "-"
}

// analyse computes t's typeInfo by a depth-first search over the types it
// reaches. Only the result for t itself is kept: a type met again while in
// progress contributes nothing new to t, but would be wrong on its own.
func analyse(t reflect.Type) *typeInfo {
	info := &typeInfo{buffer: t.Kind() == reflect.Pointer && bufferShaped(t.Elem())}
	seen := map[reflect.Type]bool{}
	var visit func(t reflect.Type, path string)
	visit = func(t reflect.Type, path string) {
		switch {
		case t.Kind() == reflect.Pointer && bufferShaped(t.Elem()):
			info.holds, info.refs = true, true
			if !msgpackKnows(t) {
				info.badAt(path, "a Buffer type msgpack can't encode ("+t.String()+" has no extension: use *transfer.Buffer)")
			}
			return
		case bufferShaped(t):
			info.badAt(path, "a Buffer held by value (use *Buffer)")
			return
		case seen[t]:
			return
		}
		seen[t] = true
		switch t.Kind() {
		case reflect.Chan, reflect.Func, reflect.UnsafePointer:
			info.badAt(path, "a "+t.Kind().String())
		case reflect.Interface:
			info.holds, info.refs = true, true
		case reflect.Pointer:
			info.refs = true
			visit(t.Elem(), "(*"+path+")")
		case reflect.Slice:
			info.refs = true
			visit(t.Elem(), path+"[i]")
		case reflect.Array:
			visit(t.Elem(), path+"[i]")
		case reflect.Map:
			info.refs = true
			visit(t.Key(), path+"[key]")
			visit(t.Elem(), path+"[k]")
		case reflect.Struct:
			for i := range t.NumField() {
				if f := t.Field(i); walked(f) {
					visit(f.Type, path+"."+f.Name)
				}
			}
		}
	}
	visit(t, t.String())
	return info
}

func (info *typeInfo) badAt(path, what string) {
	if info.bad == "" {
		info.bad = path + " is " + what
	}
}
