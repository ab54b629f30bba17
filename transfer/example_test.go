package transfer_test

import (
	"context"
	"fmt"

	"github.com/offloadgo/offload/pool"
	"github.com/offloadgo/offload/transfer"
)

// checksum owns the Buffer it is given: it may keep, return or release it;
// what it drops is released for it when it returns.
var checksum = pool.Register("example.checksum", func(_ context.Context, b *transfer.Buffer) (int, error) {
	sum := 0
	for _, c := range b.Bytes() {
		sum += int(c)
	}
	return sum, nil
})

// Passing a Buffer to a task moves it: the task gets the memory, the
// caller's handle is detached. Across processes (Subprocess) the same move
// costs a reference into shared memory instead of a copy.
func ExampleNewBuffer() {
	p, err := pool.New(pool.Options{Workers: 1})
	if err != nil {
		panic(err)
	}
	defer p.Close()

	b, err := transfer.NewBuffer(4)
	if err != nil {
		panic(err)
	}
	copy(b.Bytes(), []byte{1, 2, 3, 4})
	sum, err := pool.Run(context.Background(), p, checksum, b)
	fmt.Println(sum, err, b.Detached(), b.Bytes() == nil)

	_, err = pool.Run(context.Background(), p, checksum, b) // a detached handle can't move again
	fmt.Println(err)
	// Output:
	// 10 <nil> true true
	// transfer: buffer is detached
}

func ExampleMove() {
	raw := []byte("payload the caller gives up")
	b := transfer.Move(raw)
	fmt.Println(b.Len(), &raw[0] == &b.Bytes()[0])
	b.Release()
	fmt.Println(b.Detached(), b.Len())
	// Output:
	// 27 true
	// true 0
}

func ExampleCopy() {
	type Row struct{ Tags []string }
	in := Row{Tags: []string{"a"}}
	out, _ := transfer.Copy(in)
	out.Tags[0] = "changed"
	fmt.Println(in.Tags[0])
	// Output: a
}
