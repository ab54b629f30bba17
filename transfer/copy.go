package transfer

import (
	"fmt"
	"reflect"
)

// Copy returns a deep copy of v, for callers who want a task's input or
// output isolated from their own data in process (a hand-over shares
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
	w := rewriter{deep: true, replace: func(b *Buffer) (*Buffer, error) {
		nb, err := duplicate(b)
		if err == nil {
			made = append(made, nb)
		}
		return nb, err
	}}
	out, err := w.rewrite(reflect.ValueOf(&v).Elem())
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

// duplicate makes a new Buffer holding a copy of b's bytes. Reading them
// races with nobody: Copy's contract is that v isn't written meanwhile.
func duplicate(b *Buffer) (*Buffer, error) {
	src := b.Bytes()
	if src == nil {
		return nil, fmt.Errorf("transfer: copy: %w", ErrDetached)
	}
	nb, err := NewBuffer(len(src))
	if err != nil {
		return nil, err
	}
	copy(nb.Bytes(), src)
	return nb, nil
}
