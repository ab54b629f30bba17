package shmbuf

import (
	"fmt"
	"reflect"
	"unsafe"
)

// MoveAt moves every Buffer reachable from *p to a new handle, rewriting
// *p to hold the new handles and detaching the ones it held: what handing
// a value to an in-process task (or returning one from it) means. Zero
// bytes of Buffer memory are copied, only pointers change hands.
//
// Buffers are found at the top level and through exported struct fields
// (those msgpack would encode: not tagged `msgpack:"-"`), pointers,
// slices, arrays, map values and interfaces. To replace a Buffer without
// touching the caller's containers, the path to it is copied: a struct,
// slice, map or pointer that leads to a Buffer is a fresh copy in the
// result, sharing everything else with the original. Everything that holds
// no Buffer — plain slices, maps and pointed-to data — is shared with the
// caller, as any Go value passed to a goroutine would be (transfer.Copy
// isolates). Pointer cycles and pointers met twice are preserved; a Buffer
// that appears twice moves once and both places get the same new handle.
//
// A type that can't hold a Buffer (decided once per type and cached) is
// left as it is. If any Buffer reachable from *p is already detached,
// MoveAt fails with ErrDetached and *p is left as it was (every handle it
// detached is restored). Safe for concurrent use; two concurrent moves of
// one Buffer let exactly one win.
func MoveAt[T any](p *T) error {
	t := reflect.TypeFor[T]()
	info := infoOf(t)
	switch {
	case !info.holds:
		return nil
	case info.buffer: // the common "move this one Buffer" case, without a walk
		return moveBuffer((*unsafe.Pointer)(unsafe.Pointer(p)), t.Elem())
	}
	return moveWalk(reflect.ValueOf(p).Elem())
}

// moveWalk is MoveAt's walk over the value v, which it rewrites in place.
// (Not generic, so that its closure carries no type dictionary.)
func moveWalk(v reflect.Value) error {
	type move struct {
		from *Handle
		blk  *block
	}
	var moved []move
	w := rewriter{
		replace: func(old, fresh *Handle) error {
			blk, err := old.take()
			if err != nil {
				return err
			}
			moved = append(moved, move{old, blk})
			fresh.own(blk)
			return nil
		},
	}
	out, err := w.rewrite(v)
	if err != nil {
		for _, m := range moved {
			m.from.own(m.blk)
		}
		return err
	}
	v.Set(out)
	return nil
}

// Moved is MoveAt on a copy of v, returned: what the pool does with a
// task's output. A value that holds no Buffer, or is one *Buffer, stays
// off the heap; only a walk takes v's address where the compiler can't
// follow it.
func Moved[T any](v T) (T, error) {
	t := reflect.TypeFor[T]()
	if k := t.Kind(); k <= reflect.Complex128 || k == reflect.String {
		return v, nil
	}
	info := infoOf(t)
	switch {
	case !info.holds:
		return v, nil
	case info.buffer:
		err := moveBuffer((*unsafe.Pointer)(unsafe.Pointer(&v)), t.Elem())
		return v, err
	}
	return movedByWalk(v)
}

// movedByWalk is Moved's walk, kept apart so that the fast paths above
// don't make v escape to the heap.
func movedByWalk[T any](v T) (T, error) {
	err := MoveAt(&v)
	return v, err
}

// moveBuffer moves the Buffer that *bp points to, if any, to a new Buffer
// of type elem (bufferShaped) and points *bp at it: bp is the storage of a
// *Buffer.
func moveBuffer(bp *unsafe.Pointer, elem reflect.Type) error {
	if *bp == nil {
		return nil
	}
	blk, err := (*Handle)(*bp).take()
	if err != nil {
		return err
	}
	fresh := reflect.New(elem).UnsafePointer()
	(*Handle)(fresh).own(blk)
	*bp = fresh
	return nil
}

// Check reports whether v can be sent to another process: nil, or an error
// matching ErrNotTransferable that names what can't cross (a channel, a
// func, an unsafe.Pointer or a Buffer held by value, with its path in the
// type; or the same Buffer reachable twice), or one matching both
// ErrNotTransferable and ErrDetached for a detached Buffer. It looks where
// MoveAt looks and sends nothing. The static part is decided once per
// type; values behind interfaces are checked as found. Peer.Encode runs
// the same checks.
func Check(v any) error {
	if v == nil {
		return nil
	}
	var seen map[*Handle]bool // made on the second Buffer
	var first *Handle
	return visit(reflect.ValueOf(v), true, func(b *Handle) error {
		if b.Detached() {
			return fmt.Errorf("%w: %w", ErrNotTransferable, ErrDetached)
		}
		if b == first || seen[b] {
			return fmt.Errorf("%w: the same Buffer appears twice", ErrNotTransferable)
		}
		switch {
		case first == nil:
			first = b
		case seen == nil:
			seen = map[*Handle]bool{first: true, b: true}
		default:
			seen[b] = true
		}
		return nil
	})
}

// ReleaseAll releases every Buffer reachable from v that is still
// attached (see MoveAt for where it looks). The pool calls it on a task's
// input once the task has returned and its output was moved: a task owns
// its input Buffers until it returns, and those it neither released nor
// returned are freed then instead of leaking. Safe for concurrent use.
func ReleaseAll(v any) {
	if v == nil {
		return
	}
	_ = visit(reflect.ValueOf(v), false, func(b *Handle) error {
		b.Release()
		return nil
	})
}

// CanHold reports whether a value of type t can contain a *Buffer where
// MoveAt and ReleaseAll look. It is a few nanoseconds (cached per type),
// so callers decide once per type whether to call them at all.
func CanHold(t reflect.Type) bool {
	if k := t.Kind(); k <= reflect.Complex128 || k == reflect.String {
		return false
	}
	return infoOf(t).holds
}
