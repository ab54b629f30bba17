package main

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/color/palette"
	"image/png"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/offloadgo/offload/internal/testkit"
	"github.com/offloadgo/offload/pool"
)

// service is the thumb handler over a pool of one Python worker (and a
// queue of one), with a minute's deadline.
type service struct {
	pool *pool.Pool
	url  string
	log  *testkit.Buffer // the pool's log, with what the worker prints
}

// startService starts a service that ends with the test. python3 must be
// installed: the test fails without it.
func startService(t *testing.T) *service {
	t.Helper()
	script, err := writeWorker(t.TempDir())
	require.NoError(t, err)
	s := &service{log: &testkit.Buffer{}}
	s.pool, err = newPool("python3", script, 1, slog.New(slog.NewTextHandler(s.log, nil)))
	testkit.SkipUnsupported(t, err) // no worker processes on Windows
	require.NoError(t, err, "python3 is needed (apt-get install python3)")
	t.Cleanup(func() {
		_ = s.pool.Close()
		if t.Failed() {
			t.Logf("the pool logged:\n%s", s.log)
		}
	})
	s.url = serve(t, thumbHandler(s.pool, time.Minute))
	return s
}

// serve serves h until the test ends, and returns its URL.
func serve(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestThumbScalesDown(t *testing.T) {
	t.Parallel()
	s := startService(t)
	red, blue := color.NRGBA{R: 255, A: 255}, color.NRGBA{B: 255, A: 255}
	for _, tc := range []struct {
		name        string
		image       image.Image
		left, right color.Color // of the thumbnail
	}{
		{"RGB", halves(image.NewRGBA(image.Rect(0, 0, 200, 100)), red, blue), red, blue},
		{"RGBA", halves(image.NewNRGBA(image.Rect(0, 0, 200, 100)), color.NRGBA{R: 255, A: 128}, color.NRGBA{B: 255, A: 1}), red, blue},
		{"palette", halves(image.NewPaletted(image.Rect(0, 0, 200, 100), palette.WebSafe), red, blue), red, blue},
		{"gray", halves(image.NewGray(image.Rect(0, 0, 200, 100)), color.Gray{Y: 0x40}, color.Gray{Y: 0xC0}), color.Gray{Y: 0x40}, color.Gray{Y: 0xC0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post(t, context.Background(), s.url+"?width=50", encode(t, tc.image))
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			assert.Equal(t, "image/png", resp.Header.Get("Content-Type"))
			thumb, err := png.Decode(bytes.NewReader(body))
			require.NoError(t, err)
			require.Equal(t, image.Rect(0, 0, 50, 25), thumb.Bounds())
			for y := range 25 {
				for x := range 50 {
					want := tc.left
					if x >= 25 {
						want = tc.right
					}
					require.Equal(t, color.NRGBAModel.Convert(want), color.NRGBAModel.Convert(thumb.At(x, y)), "pixel %d,%d", x, y)
				}
			}
		})
	}

	// An image narrower than the width asked for keeps its size.
	resp, body := post(t, context.Background(), s.url+"?width=1000", encode(t, image.NewGray(image.Rect(0, 0, 30, 20))))
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	thumb, err := png.Decode(bytes.NewReader(body))
	require.NoError(t, err)
	assert.Equal(t, image.Rect(0, 0, 30, 20), thumb.Bounds())
}

// Bytes the worker can't read are the client's mistake (422, with the
// worker's exception), and cost no worker; a width out of range (400) or
// a body too large (413) is refused before any work.
func TestThumbRefusesBadInput(t *testing.T) {
	t.Parallel()
	s := startService(t)
	corrupt := blackPNG(t, 10, 10, 0)
	copy(corrupt[len(corrupt)-30:], "not deflate at all")
	for _, tc := range []struct {
		name, query string
		body        []byte
		code        int
		says        string
	}{
		{"not a PNG", "", []byte("hello"), http.StatusUnprocessableEntity, "BadImage: not a PNG image"},
		{"corrupt pixels", "", corrupt, http.StatusUnprocessableEntity, "BadImage: corrupt PNG"},
		{"16-bit", "", encode(t, image.NewGray16(image.Rect(0, 0, 4, 4))), http.StatusUnprocessableEntity, "unsupported PNG: bit depth 16"},
		{"2-colour palette", "", encode(t, image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.White})),
			http.StatusUnprocessableEntity, "unsupported PNG: bit depth 1, colour type 3"},
		{"over 8 MiB", "", make([]byte, maxBody+1), http.StatusRequestEntityTooLarge, "the body is over 8 MiB"},
		{"width 0", "?width=0", encode(t, image.NewGray(image.Rect(0, 0, 4, 4))), http.StatusBadRequest, "width: want 1 to 1024"},
		{"width too large", "?width=1025", encode(t, image.NewGray(image.Rect(0, 0, 4, 4))), http.StatusBadRequest, "width: want 1 to 1024"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post(t, context.Background(), s.url+tc.query, tc.body)
			assert.Equal(t, tc.code, resp.StatusCode)
			assert.Contains(t, string(body), tc.says)
		})
	}
	st := s.pool.Stats()
	assert.Equal(t, uint64(4), st.Failed, "the four exceptions")
	assert.Zero(t, st.Crashed, "an exception costs no worker")
}

// A request still running at its deadline gets 504, and its task is
// stopped then, not when it would have finished: Cancelled is raised in
// the Python task, which logs it (or, had it not returned within
// TerminateGrace, its worker would have been killed). The next request
// is served.
func TestThumbPastDeadline(t *testing.T) {
	t.Parallel()
	s := startService(t)
	small := encode(t, image.NewGray(image.Rect(0, 0, 8, 8)))
	resp, _ := post(t, context.Background(), s.url, small) // the worker is up: the deadline runs out in the task
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// Seconds to spare for the call to reach the worker; tens of seconds
	// short of the task's end.
	short := serve(t, thumbHandler(s.pool, 2*time.Second))
	resp, body := post(t, context.Background(), short, slowPNG(t))
	assert.Equal(t, http.StatusGatewayTimeout, resp.StatusCode, "%s", body)
	require.Eventually(t, func() bool {
		return strings.Contains(s.log.String(), "thumb: stopped (deadline)") || s.pool.Stats().Terminated == 1
	}, time.Minute, 5*time.Millisecond, "the task should be stopped at its deadline")

	resp, body = post(t, context.Background(), s.url, small)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
}

// A PNG that decodes to more than the memory limit kills its worker: the
// request gets 502 saying so, and the next one a new worker.
func TestThumbOverMemoryLimit(t *testing.T) {
	testkit.SkipOffLinux(t, "MemoryLimit")
	t.Parallel()
	s := startService(t)
	bomb := blackPNG(t, 20000, 20000, 0) // 380 KiB that decode to 400 MB
	resp, body := post(t, context.Background(), s.url, bomb)
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), "the image needs more than the worker's 256 MiB of memory")
	assert.Equal(t, uint64(1), s.pool.Stats().Crashed)

	resp, body = post(t, context.Background(), s.url, encode(t, image.NewGray(image.Rect(0, 0, 8, 8))))
	assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
}

// With the worker busy and the queue full, Shed answers 503 with a
// Retry-After before the handler reads the body.
func TestThumbShedWhenFull(t *testing.T) {
	t.Parallel()
	s := startService(t)
	slow := slowPNG(t)
	fill, hangUp := context.WithCancel(context.Background())
	defer hangUp()
	var filling sync.WaitGroup
	for range 2 { // one runs, one waits
		filling.Go(func() { _, _ = post(t, fill, s.url, slow) })
	}
	require.Eventually(t, func() bool { return s.pool.Load().InFlight == 2 }, time.Minute, time.Millisecond,
		"the two slow requests should fill the pool")

	small := encode(t, image.NewGray(image.Rect(0, 0, 8, 8)))
	resp, body := post(t, context.Background(), s.url, small)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", body)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	assert.Equal(t, uint64(1), s.pool.Stats().Shed.QueueFull)

	hangUp()
	filling.Wait()
	require.Eventually(t, func() bool { return s.pool.Load().InFlight == 0 }, time.Minute, time.Millisecond,
		"the tasks of the requests that hung up should end")
	resp, body = post(t, context.Background(), s.url, small)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
}

// The deadline is set before Shed looks at the request: with the worker
// on a task that has run longer than a request's deadline, Shed answers
// 503 at once rather than queue a request that would time out waiting.
func TestThumbShedPastDeadline(t *testing.T) {
	t.Parallel()
	s := startService(t) // a new pool: its guess at a task's run time is the running one's
	slow, hangUp := context.WithCancel(context.Background())
	defer hangUp()
	var running sync.WaitGroup
	running.Go(func() { _, _ = post(t, slow, s.url, slowPNG(t)) })
	short := serve(t, thumbHandler(s.pool, 2*time.Second))
	require.Eventually(t, func() bool { return s.pool.Load().RecentRunTime > 2*time.Second }, time.Minute, time.Millisecond,
		"the slow request should run past the short deadline")

	resp, body := post(t, context.Background(), short, encode(t, image.NewGray(image.Rect(0, 0, 8, 8))))
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), "(deadline)")
	assert.Equal(t, uint64(1), s.pool.Stats().Shed.Deadline)
	hangUp()
	running.Wait()
}

// slowPNG is a 75 KiB PNG whose pure-Python decoding takes tens of
// seconds: 64 MB of pixels, each row with the costliest filter to undo
// (Paeth), within the memory limit.
func slowPNG(t *testing.T) []byte {
	return blackPNG(t, 8000, 8000, 4)
}

// post sends body to url and returns the answer and its body; a nil
// answer when ctx ended first.
func post(t *testing.T, ctx context.Context, url string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	if ctx.Err() != nil {
		return nil, nil
	}
	require.NoError(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(resp.Body)
	require.NoError(t, err)
	return resp, b.Bytes()
}
