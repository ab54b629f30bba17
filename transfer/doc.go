// Package transfer decides how values cross a worker boundary: plain values
// are copied (msgpack between processes), while a *Buffer moves, handing its
// memory over to the receiver without a copy.
package transfer
