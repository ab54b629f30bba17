package shmbuf

import "sort"

// span is a free range [off, off+size) of a segment.
type span struct{ off, size int }

// freeList is the free space of one segment: disjoint spans sorted by
// offset, adjacent spans always merged. Not safe for concurrent use (the
// arena's lock guards it).
type freeList struct{ spans []span }

// take removes size bytes from the first span that fits (first fit) and
// returns their offset, or ok false.
func (f *freeList) take(size int) (off int, ok bool) {
	for i, s := range f.spans {
		if s.size < size {
			continue
		}
		if s.size == size {
			f.spans = append(f.spans[:i], f.spans[i+1:]...)
		} else {
			f.spans[i] = span{s.off + size, s.size - size}
		}
		return s.off, true
	}
	return 0, false
}

// put gives [off, off+size) back, merging it with its neighbours.
func (f *freeList) put(off, size int) {
	i := sort.Search(len(f.spans), func(i int) bool { return f.spans[i].off > off })
	mergePrev := i > 0 && f.spans[i-1].off+f.spans[i-1].size == off
	mergeNext := i < len(f.spans) && off+size == f.spans[i].off
	switch {
	case mergePrev && mergeNext:
		f.spans[i-1].size += size + f.spans[i].size
		f.spans = append(f.spans[:i], f.spans[i+1:]...)
	case mergePrev:
		f.spans[i-1].size += size
	case mergeNext:
		f.spans[i] = span{off, size + f.spans[i].size}
	default:
		f.spans = append(f.spans, span{})
		copy(f.spans[i+1:], f.spans[i:])
		f.spans[i] = span{off, size}
	}
}

// free returns the total free bytes.
func (f *freeList) free() int {
	n := 0
	for _, s := range f.spans {
		n += s.size
	}
	return n
}
