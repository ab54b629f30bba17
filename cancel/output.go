package cancel

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// Limits on worker output: a longer line is logged in pieces of maxLine
// bytes; the stderr tail keeps the last tailLines lines within tailBytes.
const (
	maxLine   = 4 << 10
	tailLines = 20
	tailBytes = 4 << 10
)

// output copies one of a worker's output streams to the logger, line by
// line, keeping a bounded tail of the last lines.
type output struct {
	logger *slog.Logger // already tagged with worker and pid
	stream string       // "stdout" or "stderr"

	mu    sync.Mutex
	tail  []string
	bytes int
	crash string // the last Go crash headline seen, see crashLine
	after bool   // the previous line was a crash headline
}

// isCrashLine reports whether s opens a Go runtime crash report: its
// headline scrolls out of the tail under the goroutine dump, so it is kept
// apart.
func isCrashLine(s string) bool {
	return strings.HasPrefix(s, "panic: ") || strings.HasPrefix(s, "fatal error: ")
}

// copy logs r's lines until r ends or fails (e.g. closed by the reaper);
// it never holds more than maxLine bytes of one line.
func (o *output) copy(r io.Reader) {
	br := bufio.NewReaderSize(r, maxLine)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			o.line(line)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

func (o *output) line(b []byte) {
	b = bytes.TrimRight(b, "\r\n")
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	o.logger.LogAttrs(context.Background(), slog.LevelInfo, s, slog.String("stream", o.stream))
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case isCrashLine(s):
		o.crash, o.after = truncate(s, maxLine), true
	case o.after && strings.HasPrefix(s, "[signal "):
		o.crash += " " + truncate(s, maxLine) // the fault's signal and address
		o.after = false
	default:
		o.after = false
	}
	o.tail = append(o.tail, s)
	o.bytes += len(s) + 1
	for len(o.tail) > tailLines || (o.bytes > tailBytes && len(o.tail) > 1) {
		o.bytes -= len(o.tail[0]) + 1
		o.tail = o.tail[1:]
	}
}

// lines returns the tail, newline-separated.
func (o *output) lines() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.Join(o.tail, "\n")
}

// crashLine returns the last crash headline seen ("panic: ...", "fatal
// error: ..."), with its "[signal ...]" line if one followed; "" if none.
func (o *output) crashLine() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.crash
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
