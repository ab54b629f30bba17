package main

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ovCapacity = 5.0

// refResult is a summarized reference scenario: three runs, /fast p99
// (the median run's) within lo..hi, and a job p50 unless jobP50 is 0.
func refResult(group string, procs int, name, mode string, p99, lo, hi, jobP50 time.Duration) outcome {
	r := row{Group: group, Name: name, Runs: 3, Fast: dist{N: 300, P99: p99}, FastP99Lo: lo, FastP99Hi: hi, Recovered: -1}
	if jobP50 > 0 {
		r.Job = dist{N: 3, P50: jobP50}
	}
	return outcome{Scenario: scenario{Group: group, Name: name, Procs: procs, Mode: mode}, Rows: []row{r}}
}

// overloadResult is a summarized overload scenario with one goodput per
// phase.
func overloadResult(group string, goodput ...float64) outcome {
	sc := scenario{Group: group, Name: group, Mode: "pool1", Phases: overloadPhases[:len(goodput)]}
	o := outcome{Scenario: sc}
	for i, g := range goodput {
		o.Rows = append(o.Rows, row{Group: group, Name: rowName(sc, i), Offered: sc.Phases[i] * ovCapacity, Goodput: g, Runs: 1, Recovered: -1})
	}
	return o
}

// naResult is a scenario that could not run, summarized as the lab does.
func naResult(sc scenario, why string) outcome {
	o := outcome{Scenario: sc, NA: why}
	summarize(&o, settings{Phase: time.Second, JobTime: 200 * time.Millisecond})
	return o
}

// overviewFixture is both reference groups, each with its baseline, a name
// that needs escaping and a scenario that could not run, and the three
// overload scenarios plus one that could not run.
func overviewFixture() []outcome {
	const g, g1 = "reference <jobs> & /fast", "server GOMAXPROCS=1"
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	return []outcome{
		refResult(g, 0, "only /fast", "", ms(1.64), ms(1.59), ms(2.38), 0),
		refResult(g, 0, "1 job/s, a <b> & c", "inline", ms(4.04), ms(3.08), ms(4.29), ms(209)),
		naResult(scenario{Group: g, Name: "1 job/s, subprocess 1 worker", Mode: "proc1"}, "no <subprocess> workers here"),
		refResult(g, 0, "4 jobs/s, chunked 5 ms", "chunk5", ms(4.99), ms(4.99), ms(5.15), ms(207)),
		refResult(g1, 1, "only /fast", "", ms(1.66), ms(1.62), ms(1.70), 0),
		refResult(g1, 1, "1 job/s, inline", "inline", ms(20.6), ms(20.4), ms(21.5), ms(206)),
		refResult(g1, 1, "1 job/s, chunked 5 ms, yield = budget.NetpollYield", "chunk5netpoll", ms(6.94), ms(5.74), ms(8.07), ms(233)),
		overloadResult("overload (a): unbounded queue, no Shed", 1.5, 4.5, 4.0, 2.0, 1.0, 0.0),
		naResult(scenario{Group: "overload (n): not run", Name: "overload (n): not run", Mode: "proc1", Phases: overloadPhases}, "proc1 & <no> workers"),
		overloadResult("overload (b): MaxQueue 8", 1.6, 5.1, 4.9, 4.6, 4.8, 4.7),
		overloadResult("overload (c): MaxQueue 8, Shed MaxWait 400ms", 1.4, 5.2, 4.4, 5.3, 4.2, 1.3),
	}
}

// svgChart is what the tests read of the overview.
type svgChart struct {
	Rects []struct {
		Class  string `xml:"class,attr"`
		Width  string `xml:"width,attr"`
		Height string `xml:"height,attr"`
		Title  string `xml:"title"`
	} `xml:"rect"`
	Lines []struct {
		Class string `xml:"class,attr"`
	} `xml:"line"`
	Texts []string `xml:"text"`
}

// chartBar is one data bar: its length along the value axis and its
// tooltip.
type chartBar struct {
	length float64
	title  string
}

// readOverview writes results' overview to a fresh directory and reads it
// back with parseOverview.
func readOverview(t *testing.T, results []outcome) ([]byte, svgChart) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, writeOverview(dir, results, ovCapacity))
	return parseOverview(t, filepath.Join(dir, overviewFile))
}

// parseOverview reads the overview at path, checks that it is well-formed
// XML, and returns it raw and parsed.
func parseOverview(t *testing.T, path string) ([]byte, svgChart) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "the overview must be well-formed XML")
	}
	var chart svgChart
	require.NoError(t, xml.Unmarshal(data, &chart))
	return data, chart
}

// bars are the chart's bars of class, in document order; along is
// "width" for horizontal bars, "height" for vertical ones.
func (c svgChart) bars(t *testing.T, class, along string) []chartBar {
	t.Helper()
	var out []chartBar
	for _, r := range c.Rects {
		if r.Class != "bar "+class {
			continue
		}
		v := r.Width
		if along == "height" {
			v = r.Height
		}
		length, err := strconv.ParseFloat(v, 64)
		require.NoError(t, err)
		out = append(out, chartBar{length, r.Title})
	}
	return out
}

// assertMonotone checks that a larger value gets a longer bar, and that
// each bar's tooltip shows its value as the table prints it.
func assertMonotone(t *testing.T, what string, bars []chartBar, values []float64, label func(float64) string) {
	t.Helper()
	require.Len(t, bars, len(values), what)
	order := make([]int, len(values))
	for i := range order {
		order[i] = i
		assert.Contains(t, bars[i].title, label(values[i]), "%s: the tooltip shows the table's value", what)
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(values[a], values[b]) })
	for k := 1; k < len(order); k++ {
		lo, hi := order[k-1], order[k]
		if values[hi] > values[lo] {
			assert.Greater(t, bars[hi].length, bars[lo].length, "%s: %v gets a longer bar than %v", what, values[hi], values[lo])
		}
	}
}

// The overview has a bar per reference scenario and per overload phase
// that ran, longer for larger values, the numbers the table prints, and
// escaped names; the scenarios that could not run keep their n/a reason.
func TestWriteOverview(t *testing.T) {
	t.Parallel()
	results := overviewFixture()
	data, chart := readOverview(t, results)

	// The values in the chart's order: reference rows top to bottom, then
	// goodput phase by phase.
	var fastP99, jobP50, goodput []float64
	whiskers, reasons := 0, 0
	for _, o := range results {
		switch r := o.Rows[0]; {
		case r.NA != "":
			reasons++
		case o.Scenario.Phases == nil:
			fastP99 = append(fastP99, millis(r.Fast.P99))
			if r.Job.N > 0 {
				jobP50 = append(jobP50, millis(r.Job.P50))
			}
			if r.Runs > 1 {
				whiskers++
			}
		}
	}
	for phase := range overloadPhases {
		for _, o := range results {
			if o.Scenario.Phases != nil && o.NA == "" {
				goodput = append(goodput, o.Rows[phase].Goodput)
			}
		}
	}
	require.Len(t, goodput, 3*6, "the fixture: three overload scenarios of six phases ran")
	asMs := func(v float64) string { return ms(time.Duration(v * float64(time.Millisecond))) }
	assertMonotone(t, "/fast p99", chart.bars(t, "fast-p99", "width"), fastP99, asMs)
	assertMonotone(t, "job p50", chart.bars(t, "job-p50", "width"), jobP50, asMs)
	assertMonotone(t, "goodput", chart.bars(t, "goodput", "height"), goodput, func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) })

	n := 0
	for _, l := range chart.Lines {
		if l.Class == "whisker" {
			n++
		}
	}
	assert.Equal(t, whiskers, n, "a whisker per repeated reference row")

	texts := map[string]bool{}
	for _, s := range chart.Texts {
		texts[s] = true
	}
	for _, s := range []string{"1 job/s, a <b> & c", "reference <jobs> & /fast", "server GOMAXPROCS=1",
		"n/a: no <subprocess> workers here", "only /fast 1.64", "only /fast 1.66", "capacity: 5.0 jobs/s", "back to 0.5×"} {
		assert.True(t, texts[s], "the chart says %q", s)
	}
	assert.True(t, texts["overload (n): not run (n/a: proc1 & <no> workers)"], "the overload scenario that could not run is in the legend")
	assert.Equal(t, 2, reasons)
	assert.Contains(t, string(data), "1 job/s, a &lt;b&gt; &amp; c", "names are escaped")
}

// The same results give the same bytes.
func TestWriteOverviewIsDeterministic(t *testing.T) {
	t.Parallel()
	first, _ := readOverview(t, overviewFixture())
	second, _ := readOverview(t, overviewFixture())
	assert.Equal(t, string(first), string(second))
}

// Filtered (-only) or failed runs leave panels empty or every scenario
// n/a; the chart is still written and well-formed.
func TestWriteOverviewPartialResults(t *testing.T) {
	t.Parallel()
	all := overviewFixture()
	tests := []struct {
		name          string
		results       []outcome
		fast, goodput int
	}{
		{"nothing ran", nil, 0, 0},
		{"reference only", all[:7], 6, 0},
		{"overload only", all[7:], 0, 18},
		{"every scenario n/a", []outcome{all[2], all[8]}, 0, 0},
		{"not summarized", []outcome{{Scenario: scenario{Name: "x", Phases: overloadPhases}}}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, chart := readOverview(t, tt.results)
			assert.Len(t, chart.bars(t, "fast-p99", "width"), tt.fast)
			assert.Len(t, chart.bars(t, "goodput", "height"), tt.goodput)
		})
	}
}
