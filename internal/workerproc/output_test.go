package workerproc

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCrashHeadline: a headline counts only when the runtime's goroutine
// trace follows it, past what the runtime prints in between.
func TestCrashHeadline(t *testing.T) {
	t.Parallel()
	long := "panic: " + strings.Repeat("x", maxLine)
	tests := []struct {
		name, stderr, want string
	}{
		{"panic", "panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n", "panic: boom"},
		{"fault", "panic: runtime error: nil\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1]\n\ngoroutine 1 [running]:\n",
			"panic: runtime error: nil [signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x1]"},
		{"repanicked", "panic: first [recovered]\n\tpanic: second\n\ngoroutine 1 [running]:\n", "panic: first [recovered]"},
		{"multi-line value", "panic: line one\n\tline two\n\ngoroutine 1 [running]:\n", "panic: line one"},
		{"GOTRACEBACK=crash header", "fatal error: x\n\ngoroutine 1 gp=0xc000002380 m=0 mp=0x5a2c40 [running]:\n", "fatal error: x"},
		{"system stack", "fatal error: out of memory\n\nruntime stack:\nruntime.throw()\n", "fatal error: out of memory"},
		{"headline longer than a line piece", long + "\n\ngoroutine 1 [running]:\n", long[:maxLine]},
		{"no trace", "panic: fake\n", ""},
		{"something else before the trace", "panic: fake\nsomething else\ngoroutine 1 [running]:\n", ""},
		{"not a trace header", "panic: fake\n\ngoroutine one [running]:\n", ""},
		{"a trace without a headline", "\ngoroutine 1 [running]:\n", ""},
		{"a race report in between (-race)", "fatal error: concurrent map writes\n==================\nWARNING: DATA RACE\nWrite at 0x1 by goroutine 14:\n  main.f()\n==================\n\ngoroutine 9 [running]:\n",
			"fatal error: concurrent map writes"},
		{"a headline inside a race report", "==================\nWARNING: DATA RACE\nfatal error: concurrent map writes\nPrevious write at 0x1 by goroutine 13:\n==================\ngoroutine 9 [running]:\n",
			"fatal error: concurrent map writes"},
		{"a later headline without a trace", "panic: real\n\ngoroutine 1 [running]:\nmain.main()\npanic: fake\n", "panic: real"},
	}
	for _, tt := range tests {
		o := &output{logger: slog.New(slog.DiscardHandler), stream: "stderr"}
		o.copy(strings.NewReader(tt.stderr))
		assert.Equal(t, tt.want, o.crashLine(), tt.name)
	}
}

// cancel.Exit's doc states the stderr tail's bounds in numbers, since it
// can't name these constants: this fails when they drift apart.
func TestStderrTailBoundsMatchTheDoc(t *testing.T) {
	assert.Equal(t, 20, tailLines, "cancel.Exit.Stderr's doc says at most 20 lines")
	assert.Equal(t, 4<<10, tailBytes, "cancel.Exit.Stderr's doc says at most 4 KiB")
}
