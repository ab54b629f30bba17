package shmbuf

import (
	"fmt"
	"reflect"
	"unsafe"
)

// ptrKey identifies a pointer for cycle and alias detection.
type ptrKey struct {
	p unsafe.Pointer
	t reflect.Type
}

// rewriter copies the part of a value that leads to what it rewrites and
// replaces every *Buffer in it by a new Buffer of the same type, whose
// Handle replace fills from the old one's. For a move (deep unset) that part is the paths to Buffers, and everything else is
// shared with the original; for Copy (deep set) it is everything that
// holds references. Pointers met twice map to the same copy, and a Buffer
// met twice to the same replacement, so cycles terminate and aliasing
// survives. Its zero value, with replace set, is ready.
type rewriter struct {
	replace func(old, fresh *Handle) error
	deep    bool
	ptrs    ptrMemo
}

// ptrMemo maps the pointers a rewrite met to their copies. Most values
// hold a pointer or two, so the first few live in an array, and only a
// value with more makes the map.
type ptrMemo struct {
	n    int
	keys [4]ptrKey
	vals [4]reflect.Value
	more map[ptrKey]reflect.Value
}

func (m *ptrMemo) get(k ptrKey) (reflect.Value, bool) {
	for i := range m.n {
		if m.keys[i] == k {
			return m.vals[i], true
		}
	}
	v, ok := m.more[k]
	return v, ok
}

func (m *ptrMemo) put(k ptrKey, v reflect.Value) {
	if m.n < len(m.keys) {
		m.keys[m.n], m.vals[m.n] = k, v
		m.n++
		return
	}
	if m.more == nil {
		m.more = map[ptrKey]reflect.Value{}
	}
	m.more[k] = v
}

func (w *rewriter) rewrite(v reflect.Value) (reflect.Value, error) {
	t := v.Type()
	info := infoOf(t)
	if !info.holds && !(w.deep && info.refs) {
		return v, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return w.rewritePointer(v, info)
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
		if w.deep && !infoOf(t.Elem()).refs {
			reflect.Copy(out, v)
			return out, nil
		}
		return out, w.elements(v, out)
	case reflect.Array:
		out := reflect.New(t).Elem()
		return out, w.elements(v, out)
	case reflect.Map:
		return w.rewriteMap(v)
	case reflect.Struct:
		return w.rewriteStruct(v, info)
	}
	return v, nil
}

// rewritePointer rewrites the value v points to into a new one, or v, a
// *Buffer, into its replacement; a pointer met before maps to the same
// copy.
func (w *rewriter) rewritePointer(v reflect.Value, info *typeInfo) (reflect.Value, error) {
	if v.IsNil() {
		return v, nil
	}
	t := v.Type()
	key := ptrKey{v.UnsafePointer(), t}
	if p, ok := w.ptrs.get(key); ok {
		return p, nil
	}
	if info.buffer {
		p, fresh := newBufferOf(t)
		if err := w.replace(handleIn(v), fresh); err != nil {
			return v, err
		}
		w.ptrs.put(key, p)
		return p, nil
	}
	p := reflect.New(t.Elem())
	w.ptrs.put(key, p) // before the walk below, so that a cycle ends here
	elem, err := w.rewrite(v.Elem())
	if err != nil {
		return v, err
	}
	p.Elem().Set(elem)
	return p, nil
}

// rewriteMap rewrites map v into a new map: its values, and for a Copy
// its keys too.
func (w *rewriter) rewriteMap(v reflect.Value) (reflect.Value, error) {
	if v.IsNil() {
		return v, nil
	}
	out := reflect.MakeMapWithSize(v.Type(), v.Len())
	for it := v.MapRange(); it.Next(); {
		key := it.Key()
		if w.deep { // a move looks at map values only, as msgpack's walkers do
			var err error
			if key, err = w.rewrite(key); err != nil {
				return v, err
			}
		}
		elem, err := w.rewrite(it.Value())
		if err != nil {
			return v, err
		}
		out.SetMapIndex(key, elem)
	}
	return out, nil
}

// rewriteStruct copies struct v and rewrites the fields that info says
// lead to what the rewrite replaces.
func (w *rewriter) rewriteStruct(v reflect.Value, info *typeInfo) (reflect.Value, error) {
	out := reflect.New(v.Type()).Elem()
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

// visit calls fn on the Handle of every non-nil *Buffer reachable from v,
// in place. With
// strict set it also fails on values that can't cross a process (found
// behind interfaces, where the static analysis can't see).
func visit(v reflect.Value, strict bool, fn func(*Handle) error) error {
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
			if info.buffer {
				return fn(handleIn(v))
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
