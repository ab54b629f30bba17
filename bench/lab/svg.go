package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"
)

// csvHeader names writeCSV's columns.
const csvHeader = "scenario,run,stream,sent_s,latency_ms,status,retry_after,shed,send_lag_ms"

// writeCSV appends every sample of o to w: scenario, run, stream, intended
// send time (s, from the run's start), latency (ms), status (0: failed),
// Retry-After present, answered by Shed before the handler, how late the
// generator sent it (ms).
func writeCSV(w io.Writer, o outcome) {
	for _, s := range o.Samples {
		fmt.Fprintf(w, "%q,%d,%s,%.6f,%.3f,%d,%t,%t,%.3f\n", o.Scenario.label(), s.Run, s.Stream, s.At.Seconds(),
			float64(s.Latency)/float64(time.Millisecond), s.Status, s.Retry, s.Shed, float64(s.Lag)/float64(time.Millisecond))
	}
}

// writeSVG draws /fast latency over time for one scenario: a dot per
// request on a log scale, a tick under the axis per job sent (red when it
// was shed or failed), and the overload phases as bands.
func writeSVG(dir string, o outcome, st settings) error {
	if o.NA != "" {
		return nil
	}
	f, err := os.Create(filepath.Join(dir, slug(o.Scenario.label())+".svg"))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	const width, height, left, right, top, bottom = 900.0, 360.0, 60.0, 20.0, 30.0, 50.0
	lo, hi := 0.1, 1.0 // ms, log scale
	for _, s := range o.Samples {
		if s.Stream == "ready" {
			continue
		}
		if s.Stream == "fast" {
			hi = max(hi, float64(s.Latency)/float64(time.Millisecond))
		}
	}
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	// Repeated runs are drawn one after another.
	span := max(o.Length.Seconds()*float64(max(o.Runs, 1)), 0.001)
	x := func(t time.Duration) float64 { return left + (width-left-right)*t.Seconds()/span }
	at := func(s sample) time.Duration { return time.Duration(s.Run)*o.Length + s.At }
	y := func(v float64) float64 {
		v = min(max(v, lo), hi)
		return top + (height-top-bottom)*(1-(math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo)))
	}
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="white"/><text x="%.0f" y="18" font-size="13">%s: /fast latency over time</text>`+"\n", left, esc(o.Scenario.label()))
	for i, m := range o.Scenario.Phases {
		from, to := time.Duration(i)*st.Phase, time.Duration(i+1)*st.Phase
		if i%2 == 0 {
			fmt.Fprintf(w, `<rect x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="#f3f3f3"/>`+"\n", x(from), top, x(to)-x(from), height-top-bottom)
		}
		fmt.Fprintf(w, `<text x="%.1f" y="%.0f" fill="#666">%gx</text>`+"\n", x(from)+3, top+12, m)
	}
	for d := lo; d <= hi*1.001; d *= 10 {
		fmt.Fprintf(w, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.0f" y="%.1f" text-anchor="end">%g ms</text>`+"\n",
			left, width-right, y(d), y(d), left-4, y(d)+4, d)
	}
	for t := 0; float64(t) <= span; t++ {
		xt := x(time.Duration(t) * time.Second)
		fmt.Fprintf(w, `<text x="%.1f" y="%.0f" text-anchor="middle">%ds</text>`+"\n", xt, height-bottom+28, t)
	}
	for _, s := range o.Samples {
		if s.Stream == "fast" {
			fmt.Fprintf(w, `<circle cx="%.1f" cy="%.1f" r="1.6" fill="#1f77b4" fill-opacity="0.6"/>`+"\n", x(at(s)), y(float64(s.Latency)/float64(time.Millisecond)))
			continue
		}
		color := "#2ca02c"
		if s.Status != 200 {
			color = "#d62728"
		}
		fmt.Fprintf(w, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="%s"/>`+"\n", x(at(s)), x(at(s)), height-bottom+4, height-bottom+12, color)
	}
	fmt.Fprintf(w, `<text x="%.0f" y="%.0f" fill="#666">dots: /fast requests; ticks: jobs sent (green ok, red shed or failed)</text>`+"\n", left, height-6)
	fmt.Fprintln(w, "</svg>")
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func esc(s string) string {
	var b []byte
	for _, r := range s {
		switch r {
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '&':
			b = append(b, "&amp;"...)
		default:
			b = append(b, string(r)...)
		}
	}
	return string(b)
}
