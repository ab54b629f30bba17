package shmbuf

// taskIn and taskOut are the shapes the peer tests move across: a Buffer
// (or two) inside a struct, as a task's input and output would carry them.
// Both the shared-memory peer (Linux) and the copy peer (everywhere) use them.

type taskIn struct {
	In   *Buffer
	Name string
}

type taskOut struct {
	Back *Buffer
	Out  *Buffer
	Sum  int
}
