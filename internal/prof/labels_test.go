package prof

import (
	"bytes"
	"runtime/pprof"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSetAndClear(t *testing.T) {
	l := New("t1", "InProcess")
	l.Set()
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	assert.Contains(t, b.String(), `labels: {"isolation":"InProcess", "task":"t1"}`)
	Clear()
	b.Reset()
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	assert.NotContains(t, b.String(), `"task":"t1"`)
}

// BenchmarkSetClear is what labels add to each task: pool.Run costs a few
// hundred nanoseconds.
func BenchmarkSetClear(b *testing.B) {
	l := New("bench", "InProcess")
	b.ReportAllocs()
	for b.Loop() {
		l.Set()
		Clear()
	}
}
