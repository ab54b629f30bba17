package main

import "github.com/offloadgo/offload/pool"

// ThumbIn is the thumb task's input: a PNG and the width to scale it
// down to. Image travels to the worker as raw bytes beside the JSON, not
// base64 in it: the Python task finds it as bytes in inp["Image"].
type ThumbIn struct {
	Width int
	Image []byte `offload:"blob"`
}

// ThumbOut is the thumb task's output: the thumbnail, a PNG, and its size.
type ThumbOut struct {
	Width, Height int
	Image         []byte `offload:"blob"`
}

// Thumb is served by worker.py, in the pool's Python processes: Extern
// declares its name and types, and has no Go body.
var Thumb = pool.Extern[ThumbIn, ThumbOut]("thumb")
