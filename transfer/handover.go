package transfer

import (
	"fmt"
	"reflect"
)

// handOverValue moves every Buffer reachable from v to a new handle and returns
// v rewritten to hold the new handles; the handles v held are detached.
// This is what handing v to an in-process task (or returning it from one)
// means: zero bytes of Buffer memory are copied, only pointers change hands.
//
// Buffers are found at the top level and through exported struct fields
// (those msgpack would encode: not tagged `msgpack:"-"`), pointers,
// slices, arrays, map values and interfaces. To replace a Buffer without
// touching the caller's containers, the path to it is copied: a struct,
// slice, map or pointer that leads to a Buffer is a fresh copy in the
// result, sharing everything else with v. Everything that holds no Buffer —
// plain slices, maps and pointed-to data — is shared with the caller, as any
// Go value passed to a goroutine would be; use Copy for isolation. Pointer
// cycles and pointers met twice are preserved; a Buffer that appears twice
// moves once and both places get the same new handle.
//
// A type that can't hold a Buffer (decided once per type and cached) is
// returned as is, in a few nanoseconds. If any Buffer reachable from v is
// already detached, HandOver fails with ErrDetached and v is left as it was
// (every handle it detached is restored). Safe for concurrent use; two
// concurrent hand-overs of one Buffer let exactly one win.
func handOverValue[T any](v T) (T, error) {
	t := reflect.TypeFor[T]()
	if k := t.Kind(); k <= reflect.Complex128 || k == reflect.String {
		return v, nil
	}
	if t == bufferPtrType { // the common "move this one Buffer" case, without reflection
		b := any(v).(*Buffer)
		if b == nil {
			return v, nil
		}
		blk, err := b.take()
		if err != nil {
			return v, err
		}
		return any(newHandle(blk)).(T), nil
	}
	if !infoOf(t).holds {
		return v, nil
	}
	return handOver(v)
}

// handOver is handOverValue's walk, kept apart so that the fast path
// above doesn't make v escape to the heap.
func handOver[T any](v T) (T, error) {
	if err := handOverAt(&v); err != nil {
		return v, err
	}
	return v, nil
}

// checkValue reports whether v can be sent to another process: nil, or an error
// matching ErrNotTransferable that names what can't cross (a channel, a
// func, an unsafe.Pointer or a Buffer held by value, with its path in the
// type; or the same Buffer reachable twice), or one matching both
// ErrNotTransferable and ErrDetached for a detached Buffer. It looks where
// msgpack looks (exported fields not tagged `msgpack:"-"`) and sends
// nothing. The static part is decided once per type; values behind
// interfaces are checked as found. Peer.Encode runs the same checks.
func checkValue(v any) error {
	if v == nil {
		return nil
	}
	var seen map[*Buffer]bool // made on the second Buffer
	var first *Buffer
	return visit(reflect.ValueOf(v), true, func(b *Buffer) error {
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
			seen = map[*Buffer]bool{first: true, b: true}
		default:
			seen[b] = true
		}
		return nil
	})
}

// releaseAll releases every Buffer reachable from v that is still
// attached (see HandOver for where it looks). The pool calls it on a task's
// input once the task has returned and its output was handed over: a
// task owns its input Buffers until it returns, and those it neither
// released nor returned are freed then instead of leaking. Safe for
// concurrent use.
func releaseAll(v any) {
	if v == nil {
		return
	}
	_ = visit(reflect.ValueOf(v), false, func(b *Buffer) error {
		b.Release()
		return nil
	})
}

// canHold reports whether a value of type T can contain a *Buffer where
// HandOver and ReleaseAll look. It is a few nanoseconds (cached per type),
// so callers can skip both for plain types.
func canHold[T any]() bool { return canHoldType(reflect.TypeFor[T]()) }
