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
