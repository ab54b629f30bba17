package shmbuf

// Buffer is transfer.Buffer's shape for this package's tests, which can't
// import transfer (it imports this package): a struct whose only field is
// a Handle (embedded here, for its methods), with its msgpack extension
// registered. The walkers know it as they know transfer.Buffer, by that
// shape; transfer's own tests check that the real type is known too.
type Buffer struct{ Handle }

func init() { RegisterExt((*Buffer)(nil)) }

func NewBuffer(n int) (*Buffer, error) {
	b := new(Buffer)
	return b, b.Alloc(n)
}

func Move(raw []byte) *Buffer {
	b := new(Buffer)
	b.Wrap(raw)
	return b
}

// newHandle returns a Buffer owning blk.
func newHandle(blk *block) *Buffer {
	b := new(Buffer)
	b.own(blk)
	return b
}

// arenaUse is arena.usage as a struct, for the tests' assertions.
type arenaUse struct {
	Segments      int
	Mapped, InUse int64
}

func (a *arena) stats() arenaUse {
	segments, mapped, inUse := a.usage()
	return arenaUse{segments, mapped, inUse}
}
