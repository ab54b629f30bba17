package main

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outputFixture is an overload scenario with a name that needs escaping,
// three /fast samples and two jobs, one shed.
func outputFixture() outcome {
	return outcome{
		Scenario: scenario{Group: "overload (c)", Name: "a <b> & c", Phases: []float64{0.5, 2}},
		Length:   2 * time.Second,
		Runs:     1,
		Samples: []sample{
			{Stream: "fast", At: 100 * time.Millisecond, Latency: 2 * time.Millisecond, Status: 200},
			{Stream: "fast", At: 900 * time.Millisecond, Latency: 40 * time.Millisecond, Status: 200},
			{Stream: "fast", At: 1500 * time.Millisecond, Latency: time.Millisecond, Status: 200},
			{Stream: "job", At: 200 * time.Millisecond, Latency: 210 * time.Millisecond, Status: 200},
			{Stream: "job", At: 1200 * time.Millisecond, Latency: time.Millisecond, Status: 503, Retry: true, Shed: true},
		},
	}
}

// -out's latencies.csv: the header's columns, one record per sample.
func TestWriteCSV(t *testing.T) {
	t.Parallel()
	o := outputFixture()
	var b bytes.Buffer
	b.WriteString(csvHeader + "\n")
	writeCSV(&b, o)

	records, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err, "latencies.csv must parse as CSV")
	require.Len(t, records, 1+len(o.Samples))
	for _, r := range records[1:] {
		assert.Len(t, r, len(records[0]))
		assert.Equal(t, o.Scenario.label(), r[0])
	}
	assert.Equal(t, []string{"job", "1.200000", "1.000", "503", "true", "true"}, records[5][2:8])
}

// -out's chart: well-formed SVG, a dot per /fast request and a red tick
// per job that was not answered 200.
func TestWriteSVG(t *testing.T) {
	t.Parallel()
	o := outputFixture()
	dir := t.TempDir()
	require.NoError(t, writeSVG(dir, o, settings{Phase: time.Second}))

	files, err := filepath.Glob(filepath.Join(dir, "*.svg"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)

	dots, red := 0, 0
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "the chart must be well-formed XML")
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		for _, a := range el.Attr {
			switch {
			case el.Name.Local == "circle" && a.Name.Local == "fill":
				dots++
			case el.Name.Local == "line" && a.Name.Local == "stroke" && a.Value == "#d62728":
				red++
			}
		}
	}
	assert.Equal(t, 3, dots, "one dot per /fast request")
	assert.Equal(t, 1, red, "one red tick for the shed job")
	assert.Contains(t, string(data), "a &lt;b&gt; &amp; c", "the title is escaped")
}
