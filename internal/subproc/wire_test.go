package subproc

import (
	"context"
	"errors"
	"testing"

	"github.com/offloadgo/offload/internal/codec"
	"github.com/offloadgo/offload/internal/seam"
	"github.com/offloadgo/offload/internal/workerproc"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

var _ = register("proc.internal.wait", func(ctx context.Context, _ struct{}) (int, error) {
	<-ctx.Done()
	return 0, ctx.Err()
})

func TestCallHeaderRoundTrip(t *testing.T) {
	t.Parallel()
	traces := [][]byte{nil, codec.AppendCarrier(nil, map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}),
		make([]byte, codec.MaxCarrier)}
	for _, name := range []string{"a", "proc.add", string(make([]byte, maxNameLen))} {
		for _, trace := range traces {
			b, err := appendCallHeader(nil, name, trace)
			require.NoError(t, err)
			require.LessOrEqual(t, len(b), callHeaderLen(name, trace))
			got, gotTrace, input, err := parseCall(append(b, 1, 2, 3))
			require.NoError(t, err)
			assert.Equal(t, name, got)
			assert.Equal(t, trace, gotTrace)
			assert.Equal(t, []byte{1, 2, 3}, input)
		}
	}
	_, err := appendCallHeader(nil, string(make([]byte, maxNameLen+1)), nil)
	require.Error(t, err)
	_, err = appendCallHeader(nil, "a", make([]byte, codec.MaxCarrier+1))
	require.ErrorIs(t, err, seam.ErrPayloadTooLarge)
	require.ErrorContains(t, err, "trace context")
	for _, bad := range [][]byte{nil, {0x80}, {0, 5, 'a'}, {5, 'a'}, {0, 0xff, 0xff, 0xff, 0xff, 0x0f}, {0xff, 0xff, 0xff, 0xff, 0x0f}} {
		_, _, _, err := parseCall(bad)
		require.ErrorContains(t, err, "corrupt call frame", "%x", bad)
	}
}

func FuzzParseFrames(f *testing.F) {
	call, _ := appendCallHeader(nil, "proc.add", nil)
	f.Add(call)
	traced, _ := appendCallHeader(nil, "proc.add", codec.AppendCarrier(nil, map[string]string{"baggage": "k=v"}))
	f.Add(traced)
	f.Add(codec.EncodePanic("boom", []byte("stack")))
	f.Add(codec.EncodePanic(errors.New("an error"), []byte("stack")))
	f.Add(codec.EncodePanic(map[string]int{"a": 1}, []byte("stack")))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, body []byte) {
		if name, trace, input, err := parseCall(body); err == nil {
			require.LessOrEqual(t, len(name), maxNameLen)
			require.LessOrEqual(t, len(trace), codec.MaxCarrier)
			require.LessOrEqual(t, len(name)+len(trace)+len(input), len(body))
			if carrier, err := codec.ParseCarrier(trace); err == nil {
				assert.Equal(t, trace, codec.AppendCarrier(nil, carrier), "one encoding per carrier")
			}
		}
		value, stack := codec.DecodePanic(body)
		require.LessOrEqual(t, len(stack), len(body))
		if text, ok := value.(string); ok {
			require.LessOrEqual(t, len(text)+len(stack), len(body))
		}
	})
}

// The name check runs against the worker's hello, which in one binary
// always lists every task: fake a hello that lacks it.
func TestExchangeUnknownTask(t *testing.T) {
	t.Parallel()
	r := &runner{sp: &ProcessCarrier{}, id: 7}
	r.cur = &child{pid: 4242, tasks: map[string]struct{}{"other": {}}, gone: make(chan struct{})}
	err := r.Exchange(context.Background(), &seam.Call{Task: "proc.add", Handover: new(seam.Handover)})
	require.ErrorIs(t, err, seam.ErrUnknownTask)
	assert.Contains(t, err.Error(), `"proc.add"`)
	assert.Contains(t, err.Error(), "pid 4242")
	assert.Contains(t, err.Error(), "package level")
}

// startServe runs serve over one end of a new channel pair and returns the
// other end, as a pool holds it, and the channel serve's exit code arrives on.
func startServe(t *testing.T) (*workerproc.Conn, <-chan int) {
	t.Helper()
	return startServeWith(t, nil)
}

// startServeWith is startServe for a worker whose tasks get the trace
// context of their calls through extract.
func startServeWith(t *testing.T, extract Extract) (*workerproc.Conn, <-chan int) {
	t.Helper()
	skipUnsupportedPlatform(t)
	parent, worker, err := workerproc.NewPair(0)
	require.NoError(t, err)
	code := make(chan int, 1)
	go func() {
		code <- Serve(worker, extract)
		worker.Close()
	}()
	return parent, code
}

// serve, driven in process over a channel pair, as a pool would drive it.
func TestServe(t *testing.T) {
	t.Parallel()
	parent, code := startServe(t)
	defer parent.Close()
	hello, err := parent.ReadFrame()
	require.NoError(t, err)
	assert.Equal(t, workerproc.KindHello, hello.Kind)
	assert.Contains(t, string(hello.Body), "proc.internal.wait")

	call := func(id uint64, task string, in any) {
		t.Helper()
		body, err := appendCallHeader(nil, task, nil)
		require.NoError(t, err)
		data, err := msgpack.Marshal(in)
		require.NoError(t, err)
		require.NoError(t, parent.WriteFrame(workerproc.Frame{Kind: kindCall, ID: id, Body: append(body, data...)}))
	}
	expect := func(id uint64, kind byte, contains string) []byte {
		t.Helper()
		f, err := parent.ReadFrame()
		require.NoError(t, err)
		assert.Equal(t, id, f.ID)
		assert.Equal(t, kind, f.Kind, "body %q", f.Body)
		assert.Contains(t, string(f.Body), contains)
		return f.Body
	}

	require.NoError(t, parent.WriteFrame(workerproc.Frame{Kind: kindCall, ID: 1, Body: []byte{9, 'x'}}))
	expect(1, kindError, "corrupt call frame")
	call(2, "proc.nope", nil)
	expect(2, kindUnknown, `"proc.nope" is not registered`)
	call(3, "proc.internal.wait", "not a struct")
	expect(3, kindError, `decode input of task "proc.internal.wait"`)
	require.NoError(t, parent.WriteFrame(workerproc.Frame{Kind: 0x77, ID: 4}))
	// Two calls at once (the pool sends one, but a second must not hurt);
	// cancel them in reverse order.
	call(5, "proc.internal.wait", struct{}{})
	call(6, "proc.internal.wait", struct{}{})
	require.NoError(t, parent.WriteFrame(workerproc.Frame{Kind: kindCancel, ID: 6}))
	expect(6, kindError, "context canceled")
	require.NoError(t, parent.WriteFrame(workerproc.Frame{Kind: kindCancel, ID: 5}))
	expect(5, kindError, "context canceled")
	require.NoError(t, parent.WriteFrame(workerproc.Frame{Kind: kindCancel, ID: 99})) // unknown: ignored

	parent.Close()
	assert.Equal(t, 0, <-code, "EOF ends the worker cleanly")
}

func TestCodecErrors(t *testing.T) {
	t.Parallel()
	sp := &ProcessCarrier{maxPayload: 16}
	_, err := sp.encode("t", nil, func() {})
	require.ErrorContains(t, err, `pool: encode input of task "t"`)
	_, err = sp.encode("t", nil, make([]byte, 17))
	require.ErrorIs(t, err, seam.ErrPayloadTooLarge)
	body, err := sp.encode("t", nil, 12)
	require.NoError(t, err)
	_, _, input, err := parseCall(body)
	require.NoError(t, err)
	var n int
	require.NoError(t, sp.decode("t", input, &n, nil))
	assert.Equal(t, 12, n)
	// A header claiming a huge array is refused before msgpack allocates.
	var s []int
	err = sp.decode("t", []byte{0xdd, 0x7f, 0xff, 0xff, 0xff}, &s, nil)
	require.ErrorContains(t, err, `pool: decode output of task "t"`)
}
