package transfer

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"
)

var (
	bufferPtrType = reflect.TypeFor[*Buffer]()
	bufferType    = reflect.TypeFor[Buffer]()
)

// typeInfo is what the walkers need to know about a type, computed once.
type typeInfo struct {
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
// makes HandOver on a type without Buffers cost a map lookup. A program has
// few types, so the map is copied on write and read without a lock (a plain
// map read is cheaper than sync.Map's).
var (
	typeInfos   atomic.Pointer[map[reflect.Type]*typeInfo]
	typeInfosMu sync.Mutex
)

// infoOf returns t's typeInfo.
func infoOf(t reflect.Type) *typeInfo {
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
	info := &typeInfo{}
	seen := map[reflect.Type]bool{}
	var visit func(t reflect.Type, path string)
	visit = func(t reflect.Type, path string) {
		switch {
		case t == bufferPtrType:
			info.holds, info.refs = true, true
			return
		case t == bufferType:
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

// ptrKey identifies a pointer for cycle and alias detection.
type ptrKey struct {
	p unsafe.Pointer
	t reflect.Type
}

// rewriter (its zero value, with replace set, is ready) copies the part of a value that leads to Buffers, replacing
// every *Buffer by what replace returns; everything else is shared with the
// original. Pointers met twice map to the same copy, so cycles terminate
// and aliasing survives.
type rewriter struct {
	replace func(*Buffer) (*Buffer, error)
	bufs    map[*Buffer]*Buffer
	ptrs    map[ptrKey]reflect.Value
}

func (w *rewriter) rewrite(v reflect.Value) (reflect.Value, error) {
	t := v.Type()
	info := infoOf(t)
	if !info.holds {
		return v, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v, nil
		}
		if t == bufferPtrType {
			return w.buffer(v.Interface().(*Buffer))
		}
		key := ptrKey{v.UnsafePointer(), t}
		if p, ok := w.ptrs[key]; ok {
			return p, nil
		}
		p := reflect.New(t.Elem())
		if w.ptrs == nil {
			w.ptrs = map[ptrKey]reflect.Value{}
		}
		w.ptrs[key] = p
		elem, err := w.rewrite(v.Elem())
		if err != nil {
			return v, err
		}
		p.Elem().Set(elem)
		return p, nil
	case reflect.Interface:
		if v.IsNil() {
			return v, nil
		}
		elem, err := w.rewrite(v.Elem())
		if err != nil {
			return v, err
		}
		out := reflect.New(t).Elem()
		out.Set(elem)
		return out, nil
	case reflect.Slice:
		if v.IsNil() {
			return v, nil
		}
		out := reflect.MakeSlice(t, v.Len(), v.Len())
		return out, w.elements(v, out)
	case reflect.Array:
		out := reflect.New(t).Elem()
		return out, w.elements(v, out)
	case reflect.Map:
		if v.IsNil() {
			return v, nil
		}
		out := reflect.MakeMapWithSize(t, v.Len())
		for it := v.MapRange(); it.Next(); {
			elem, err := w.rewrite(it.Value())
			if err != nil {
				return v, err
			}
			out.SetMapIndex(it.Key(), elem)
		}
		return out, nil
	case reflect.Struct:
		out := reflect.New(t).Elem()
		out.Set(v)
		for _, i := range info.fields {
			f, err := w.rewrite(v.Field(i))
			if err != nil {
				return v, err
			}
			out.Field(i).Set(f)
		}
		return out, nil
	}
	return v, nil
}

func (w *rewriter) elements(v, out reflect.Value) error {
	for i := range v.Len() {
		elem, err := w.rewrite(v.Index(i))
		if err != nil {
			return err
		}
		out.Index(i).Set(elem)
	}
	return nil
}

func (w *rewriter) buffer(b *Buffer) (reflect.Value, error) {
	nb, ok := w.bufs[b]
	if !ok {
		var err error
		if nb, err = w.replace(b); err != nil {
			return reflect.Value{}, err
		}
		if w.bufs == nil {
			w.bufs = map[*Buffer]*Buffer{}
		}
		w.bufs[b] = nb
	}
	return reflect.ValueOf(nb), nil
}

// visit calls fn on every non-nil *Buffer reachable from v, in place. With
// strict set it also fails on values that can't cross a process (found
// behind interfaces, where the static analysis can't see).
func visit(v reflect.Value, strict bool, fn func(*Buffer) error) error {
	var seen map[ptrKey]bool // made on the first pointer
	var walk func(v reflect.Value) error
	walk = func(v reflect.Value) error {
		t := v.Type()
		info := infoOf(t)
		if strict && info.bad != "" {
			return fmt.Errorf("%w: %s", ErrNotTransferable, info.bad)
		}
		if !info.holds {
			return nil
		}
		switch t.Kind() {
		case reflect.Pointer:
			if v.IsNil() {
				return nil
			}
			if t == bufferPtrType {
				return fn(v.Interface().(*Buffer))
			}
			key := ptrKey{v.UnsafePointer(), t}
			if seen[key] {
				return nil
			}
			if seen == nil {
				seen = map[ptrKey]bool{}
			}
			seen[key] = true
			return walk(v.Elem())
		case reflect.Interface:
			if v.IsNil() {
				return nil
			}
			return walk(v.Elem())
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				if err := walk(v.Index(i)); err != nil {
					return err
				}
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				if err := walk(it.Value()); err != nil {
					return err
				}
			}
		case reflect.Struct:
			for _, i := range info.fields {
				if err := walk(v.Field(i)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(v)
}
