package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"
)

// overviewFile is the overview chart's name in -out's directory.
const overviewFile = "overview.svg"

// writeOverview writes dir/overview.svg: the main table in one chart. Its
// first panel has a row per reference scenario with its /fast p99 (a bar
// on a log axis, the runs' lowest and highest p99 as a whisker, each
// group's "only /fast" p99 as a dashed line) and its job p50; its second
// panel has the overload scenarios' goodput per phase as grouped bars, with
// capacity (jobs/s) as a line. A panel with no scenario to show is left
// out.
//
// It reads only the Scenario and the Rows of results, the rows
// printTable prints, so the chart and the table can't disagree. A
// scenario that could not run keeps its place, with its n/a reason and no
// bar. The output depends on nothing but the input, in its order.
func writeOverview(dir string, results []outcome, capacity float64) error {
	var reference, phased []outcome
	for _, o := range results {
		switch {
		case len(o.Rows) == 0: // not summarized: nothing the table shows either
		case o.Scenario.Phases == nil:
			reference = append(reference, o)
		case o.Scenario.Cores: // phases of another capacity: the table has them
		default:
			phased = append(phased, o)
		}
	}
	var body canvas
	bottom := 40.0
	body.text(ovMargin, 24, `font-size="16" font-weight="bold"`, "offload load lab: overview")
	if len(reference) > 0 {
		bottom = drawReference(&body, reference, bottom+10)
	}
	if len(phased) > 0 {
		bottom = drawGoodput(&body, phased, capacity, bottom+30)
	}
	var svg bytes.Buffer
	fmt.Fprintf(&svg, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n",
		ovWidth, bottom+20, ovWidth, bottom+20)
	fmt.Fprintln(&svg, `<rect width="100%" height="100%" fill="white"/>`)
	svg.Write(body.Bytes())
	fmt.Fprintln(&svg, "</svg>")
	return os.WriteFile(filepath.Join(dir, overviewFile), svg.Bytes(), 0o644)
}

// The overview's colours are Tableau 10's, distinct from each other on
// white; ovPalette gives each overload scenario its own, in order.
var ovPalette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7"}

const (
	ovWidth, ovMargin = 1020.0, 16.0
	fastColour        = "#4e79a7"
	jobColour         = "#f28e2b"
	baselineColour    = "#e15759"
	mutedColour       = "#666"
	gridColour        = "#ddd"

	// valueLabel is the style of the numbers beside bars: small, with a
	// white halo so that they stay legible over grid and reference lines.
	valueLabel = `font-size="10" stroke="white" stroke-width="3" paint-order="stroke"`
)

// canvas collects SVG elements. Every text goes through esc; the attrs
// strings are the overview's own constants, never data.
type canvas struct{ bytes.Buffer }

func (c *canvas) rect(x, y, w, h float64, attrs string) {
	fmt.Fprintf(c, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" %s/>`+"\n", x, y, max(w, 0), max(h, 0), attrs)
}

// bar is a data rect: class names what it shows (the tests find bars by
// it), title is the tooltip a browser shows on hover.
func (c *canvas) bar(x, y, w, h float64, class, fill, title string) {
	fmt.Fprintf(c, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>`+"\n",
		class, x, y, max(w, 0), max(h, 0), fill, esc(title))
}

func (c *canvas) line(x1, y1, x2, y2 float64, attrs string) {
	fmt.Fprintf(c, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" %s/>`+"\n", x1, y1, x2, y2, attrs)
}

func (c *canvas) text(x, y float64, attrs, s string) {
	fmt.Fprintf(c, `<text x="%.1f" y="%.1f" %s>%s</text>`+"\n", x, y, attrs, esc(s))
}

// legend draws a swatch and its label at (x, y) and returns where the next
// entry can start on the same line.
func (c *canvas) legend(x, y float64, swatch, label string) float64 {
	switch swatch {
	case "whisker":
		c.line(x, y-4, x+14, y-4, `stroke="#222"`)
		c.line(x, y-7, x, y-1, `stroke="#222"`)
		c.line(x+14, y-7, x+14, y-1, `stroke="#222"`)
	case "baseline", "capacity":
		colour := baselineColour
		if swatch == "capacity" {
			colour = "#222"
		}
		c.line(x, y-4, x+14, y-4, `stroke="`+colour+`" stroke-width="1.5" stroke-dasharray="4 3"`)
	default:
		c.rect(x, y-9, 14, 10, `fill="`+swatch+`"`)
	}
	c.text(x+19, y, "", label)
	return x + 19 + 6.2*float64(len([]rune(label))) + 18
}

// millis is d in milliseconds, the unit of every latency axis.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// niceAbove is the smallest 1, 2 or 5 × 10^k at or above v (> 0); niceBelow
// the largest at or below it. They bound axes at round numbers.
func niceAbove(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

func niceBelow(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{5, 2} {
		if m*p <= v*(1+1e-9) {
			return m * p
		}
	}
	return p
}

// linearAxis is a round step and the axis top (a multiple of it) for
// values up to top (> 0), in at most about steps steps.
func linearAxis(top float64, steps int) (step, axisTop float64) {
	step = niceAbove(top / float64(steps))
	return step, step * math.Ceil(top/step-1e-9)
}

// logTicks are the 1, 2, 5 × 10^k values from lo to hi.
func logTicks(lo, hi float64) []float64 {
	var ticks []float64
	for v := lo; v <= hi*(1+1e-9); v = niceAbove(v * 1.01) {
		ticks = append(ticks, v)
	}
	return ticks
}

// truncate shortens s to n runes, marking the cut.
func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
