package transfer

import (
	"reflect"

	"github.com/offloadgo/offload/internal/xfer"
)

// The cross-process plumbing is for the pool's transports only, so it is
// published through internal/xfer rather than exported here: this fills in
// xfer's functions, at init, which only assigns them.
func init() {
	xfer.NewPeer = func() xfer.Peer { return newProcessPeer() }
	xfer.CopyPeer = copyPeer{}
	xfer.HandOverAt = handOverAt
	xfer.Check = checkValue
	xfer.CanHold = canHoldType
	xfer.ReleaseAll = releaseAll
	xfer.ValidateMessage = validateMessage
	xfer.NewDecoder = newDecoder
}

// handOverAt is handOverValue for the value ptr points to, rewritten in
// place: the transports know a task's input only by a pointer to it.
func handOverAt(ptr any) error {
	if bp, ok := ptr.(**Buffer); ok { // the common "move this one Buffer" case, without reflection
		if *bp == nil {
			return nil
		}
		blk, err := (*bp).take()
		if err != nil {
			return err
		}
		*bp = newHandle(blk)
		return nil
	}
	v := reflect.ValueOf(ptr).Elem()
	if !canHoldType(v.Type()) {
		return nil
	}
	type move struct {
		old *Buffer
		blk *block
	}
	var moved []move
	w := rewriter{
		replace: func(b *Buffer) (*Buffer, error) {
			blk, err := b.take()
			if err != nil {
				return nil, err
			}
			moved = append(moved, move{b, blk})
			return newHandle(blk), nil
		},
	}
	out, err := w.rewrite(v)
	if err != nil {
		for _, m := range moved {
			m.old.blk.Store(m.blk)
		}
		return err
	}
	v.Set(out)
	return nil
}

// canHoldType is canHold for a reflect.Type.
func canHoldType(t reflect.Type) bool {
	if k := t.Kind(); k <= reflect.Complex128 || k == reflect.String {
		return false
	}
	return t == bufferPtrType || infoOf(t).holds
}
