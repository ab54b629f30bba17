package transfer

import (
	"fmt"
	"reflect"
)

// Copy returns a deep copy of v, for callers who want a task's input or
// output isolated from their own data in process (HandOver shares
// everything that isn't a Buffer). Pointers, slices, maps and interfaces
// reached through exported fields are duplicated (pointer cycles and shared
// pointers are preserved); a Buffer is duplicated into a new Buffer with a
// copy of its bytes, the original staying live. Channels, funcs, strings
// and unexported fields are shared, since they can't or needn't be copied.
//
// Copy fails with ErrDetached (v untouched, nothing allocated kept) for a
// detached Buffer, or with NewBuffer's error. A type that holds no
// references is returned as is. Safe for concurrent use as long as nobody
// writes v meanwhile.
func Copy[T any](v T) (T, error) {
	t := reflect.TypeFor[T]()
	if k := t.Kind(); k <= reflect.Complex128 || k == reflect.String {
		return v, nil
	}
	if !infoOf(t).refs {
		return v, nil
	}
	return deepCopy(v)
}

// deepCopy is Copy's walk, kept apart so that the fast path above doesn't
// make v escape to the heap.
func deepCopy[T any](v T) (T, error) {
	var made []*Buffer
	c := copier{ptrs: map[ptrKey]reflect.Value{}, made: &made}
	out, err := c.copy(reflect.ValueOf(&v).Elem())
	if err != nil {
		for _, b := range made {
			b.Release()
		}
		return v, err
	}
	var res T
	reflect.ValueOf(&res).Elem().Set(out)
	return res, nil
}

// copier duplicates values for Copy.
type copier struct {
	ptrs map[ptrKey]reflect.Value
	made *[]*Buffer
}

func (c *copier) copy(v reflect.Value) (reflect.Value, error) {
	t := v.Type()
	info := infoOf(t)
	if !info.refs {
		return v, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v, nil
		}
		key := ptrKey{v.UnsafePointer(), t}
		if p, ok := c.ptrs[key]; ok {
			return p, nil
		}
		if t == bufferPtrType {
			nb, err := c.buffer(v.Interface().(*Buffer))
			if err != nil {
				return v, err
			}
			p := reflect.ValueOf(nb)
			c.ptrs[key] = p
			return p, nil
		}
		p := reflect.New(t.Elem())
		c.ptrs[key] = p
		elem, err := c.copy(v.Elem())
		if err != nil {
			return v, err
		}
		p.Elem().Set(elem)
		return p, nil
	case reflect.Interface:
		if v.IsNil() {
			return v, nil
		}
		elem, err := c.copy(v.Elem())
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
		if !infoOf(t.Elem()).refs {
			reflect.Copy(out, v)
			return out, nil
		}
		return out, c.elements(v, out)
	case reflect.Array:
		out := reflect.New(t).Elem()
		return out, c.elements(v, out)
	case reflect.Map:
		if v.IsNil() {
			return v, nil
		}
		out := reflect.MakeMapWithSize(t, v.Len())
		for it := v.MapRange(); it.Next(); {
			key, err := c.copy(it.Key())
			if err != nil {
				return v, err
			}
			elem, err := c.copy(it.Value())
			if err != nil {
				return v, err
			}
			out.SetMapIndex(key, elem)
		}
		return out, nil
	case reflect.Struct:
		out := reflect.New(t).Elem()
		out.Set(v)
		for _, i := range info.fields {
			f, err := c.copy(v.Field(i))
			if err != nil {
				return v, err
			}
			out.Field(i).Set(f)
		}
		return out, nil
	}
	return v, nil
}

func (c *copier) elements(v, out reflect.Value) error {
	for i := range v.Len() {
		elem, err := c.copy(v.Index(i))
		if err != nil {
			return err
		}
		out.Index(i).Set(elem)
	}
	return nil
}

// buffer duplicates one Buffer. Reading the source's bytes races with
// nobody: Copy's contract is that v isn't written meanwhile.
func (c *copier) buffer(b *Buffer) (*Buffer, error) {
	src := b.Bytes()
	if src == nil {
		return nil, fmt.Errorf("transfer: copy: %w", ErrDetached)
	}
	nb, err := NewBuffer(len(src))
	if err != nil {
		return nil, err
	}
	copy(nb.Bytes(), src)
	*c.made = append(*c.made, nb)
	return nb, nil
}
