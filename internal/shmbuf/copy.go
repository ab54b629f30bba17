package shmbuf

import (
	"fmt"
	"reflect"
)

// Copy returns a deep copy of v: transfer.Copy, whose doc is the
// contract. Pointers, slices, maps and interfaces reached through exported
// fields are duplicated (cycles and shared pointers preserved), and every
// Buffer becomes a new Buffer with a copy of its bytes.
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
	var made []*Handle
	w := rewriter{deep: true, replace: func(old, fresh *Handle) error {
		err := duplicate(old, fresh)
		if err == nil {
			made = append(made, fresh)
		}
		return err
	}}
	out, err := w.rewrite(reflect.ValueOf(&v).Elem())
	if err != nil {
		for _, h := range made {
			h.Release()
		}
		return v, err
	}
	var res T
	reflect.ValueOf(&res).Elem().Set(out)
	return res, nil
}

// duplicate gives fresh a copy of old's bytes in new memory. Reading them
// races with nobody: Copy's contract is that v isn't written meanwhile.
func duplicate(old, fresh *Handle) error {
	src := old.Bytes()
	if src == nil {
		return fmt.Errorf("transfer: copy: %w", ErrDetached)
	}
	if err := fresh.Alloc(len(src)); err != nil {
		return err
	}
	copy(fresh.Bytes(), src)
	return nil
}
