package shmbuf

import (
	"encoding/binary"
	"fmt"
)

// MaxDepth is how deeply arrays and maps (structs are either) may nest
// in a message from another process: ValidateMessage refuses one nested
// deeper. Decoding recurses once per level, in msgpack (about 500 bytes
// of stack a level into an any) and in a Peer's walk of the decoded
// value, so the bound keeps hostile bytes from costing the receiver a
// gigabyte of stack (a megabyte of 0x91 bytes is a million nested
// arrays): at MaxDepth a decode takes tens of kilobytes. 100 is the
// limit protobuf's C++ and Java parsers set by default, beyond any value
// a task's types make short of a recursive one (a long linked list, a
// deep tree); the pool's codec refuses to encode a value nested deeper,
// so that its sender learns of it.
const MaxDepth = 100

// ValidateMessage checks, in one linear pass without allocating, that data
// starts with one complete msgpack value whose every array, map, string,
// binary and extension length fits in the bytes that follow it, and whose
// arrays and maps nest at most MaxDepth deep (ErrTooDeep; an extension's
// payload is not looked into). msgpack v5.4.1 preallocates slices and
// interface maps to the length a header claims, so without this check a
// nine-byte message can make the decoder allocate gigabytes; after it, a
// decode allocates at most a small multiple of the message size (times
// the size of an element), on a stack bounded by MaxDepth. Peer.Unmarshal
// runs it; code that calls Peer.Decode on a peer's bytes should run it
// first. Bytes after the value are not examined.
func ValidateMessage(data []byte) error {
	if len(data) > 0 && !isContainer(data[0]) {
		return validate(data, nil) // no levels to keep: spare zeroing them
	}
	var outer [MaxDepth]int
	return validate(data, &outer)
}

// isContainer says whether code c starts an array or a map.
func isContainer(c byte) bool {
	return c&0xe0 == 0x80 || c >= 0xdc && c <= 0xdf
}

// validate is ValidateMessage with outer, room for MaxDepth levels (none
// if data does not start with an array or a map).
func validate(data []byte, outer *[MaxDepth]int) error {
	// left is how many values are still to come in the innermost open
	// container (at depth 0, the message itself: one value); outer[d] is
	// how many in the one open at depth d, saved while a deeper one is
	// read, and outerSum their sum.
	pos, left, outerSum := 0, 1, 0
	var depth uint
	for {
		if pos >= len(data) {
			return fmt.Errorf("%w: truncated at byte %d", ErrBadMessage, pos)
		}
		at, c := pos, data[pos]
		pos++
		left--
		var fixed, items int
		container := false
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		case c <= 0x8f:
			items, container = 2*int(c&0x0f), true
		case c <= 0x9f:
			items, container = int(c&0x0f), true
		case c <= 0xbf:
			fixed = int(c & 0x1f)
		default:
			var err error
			if fixed, items, pos, err = readSized(data, pos, c); err != nil {
				return err
			}
			container = c >= 0xdc
		}
		if fixed > 0 {
			if fixed > len(data)-pos {
				return fmt.Errorf("%w: %d bytes claimed at byte %d, %d left", ErrBadMessage, fixed, pos, len(data)-pos)
			}
			pos += fixed
		}
		if container {
			if depth == MaxDepth {
				return fmt.Errorf("%w, at byte %d", ErrTooDeep, at)
			}
			if items > 0 {
				// Every value still to come needs at least one byte.
				if pending := left + outerSum + items; pending > len(data)-pos {
					return fmt.Errorf("%w: %d values claimed at byte %d, %d bytes left", ErrBadMessage, pending, pos, len(data)-pos)
				}
				outer[depth] = left
				outerSum += left
				depth++
				left = items
				continue
			}
		}
		for left == 0 { // the innermost container is complete
			if depth == 0 {
				return nil
			}
			depth--
			left = outer[depth]
			outerSum -= left
		}
	}
}

// readSized reads the length or count that follows code c (0xc1 to 0xdf,
// whose sizes headerOf gives) at data[pos:]: it returns the bytes of the
// value that follow, the values it holds (an array's or map's items), and
// the position after the length or count.
func readSized(data []byte, pos int, c byte) (fixed, items, next int, err error) {
	fixed, lenBytes, counted, ok := headerOf(c)
	if !ok {
		return 0, 0, pos, fmt.Errorf("%w: invalid code 0x%x at byte %d", ErrBadMessage, c, pos-1)
	}
	if counted > 0 { // an array or a map: its count comes first
		n, err := readLen(data, pos, counted)
		if err != nil {
			return 0, 0, pos, err
		}
		pos += counted
		items = n
		if c == 0xde || c == 0xdf {
			items = 2 * n
		}
	}
	if lenBytes > 0 {
		n, err := readLen(data, pos, lenBytes)
		if err != nil {
			return 0, 0, pos, err
		}
		pos += lenBytes
		fixed += n
	}
	return fixed, items, pos, nil
}

// headerOf says what follows code c, a code of 0xc1 to 0xdf: fixed bytes,
// a length of lenBytes bytes that counts more bytes, or (an array or map
// of 16 or 32) a count of counted bytes. ok is false for a code msgpack
// does not define.
func headerOf(c byte) (fixed, lenBytes, counted int, ok bool) {
	switch c {
	case 0xc4, 0xd9:
		lenBytes = 1
	case 0xc5, 0xda:
		lenBytes = 2
	case 0xc6, 0xdb:
		lenBytes = 4
	case 0xc7:
		lenBytes, fixed = 1, 1
	case 0xc8:
		lenBytes, fixed = 2, 1
	case 0xc9:
		lenBytes, fixed = 4, 1
	case 0xca, 0xce, 0xd2:
		fixed = 4
	case 0xcb, 0xcf, 0xd3:
		fixed = 8
	case 0xcc, 0xd0:
		fixed = 1
	case 0xcd, 0xd1:
		fixed = 2
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
		fixed = 1 + 1<<(c-0xd4)
	case 0xdc, 0xde:
		counted = 2
	case 0xdd, 0xdf:
		counted = 4
	default:
		return 0, 0, 0, false
	}
	return fixed, lenBytes, counted, true
}

// readLen reads a big-endian length of size bytes at data[pos:].
func readLen(data []byte, pos, size int) (int, error) {
	if size > len(data)-pos {
		return 0, fmt.Errorf("%w: truncated length at byte %d", ErrBadMessage, pos)
	}
	switch size {
	case 1:
		return int(data[pos]), nil
	case 2:
		return int(binary.BigEndian.Uint16(data[pos:])), nil
	default:
		return int(binary.BigEndian.Uint32(data[pos:])), nil
	}
}
