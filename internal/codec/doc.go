// Package codec is the msgpack codec both ends of a transport use for a
// task's input and output: structs as arrays where the type allows it, a
// []byte decoded as the bytes of the message it came in, bounded decoding
// of bytes another process sent (lengths and nesting: a value nested
// deeper than a receiver decodes is refused at its encoding too), frame
// bodies sized from a task's history, and a panic's value as close as
// msgpack can carry it.
package codec
