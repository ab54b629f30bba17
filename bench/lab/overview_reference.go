package main

import (
	"fmt"
	"math"
)

// The reference panel's columns: scenario names right-aligned at
// refNameRight, /fast p99 from refFastLeft (with room after it for the
// value and range labels), job p50 from refJobLeft.
const (
	refNameRight                = 330.0
	refFastLeft, refFastWidth   = 340.0, 320.0
	refJobLeft, refJobWidth     = 830.0, 150.0
	refRowHeight, refBarHeight  = 18.0, 11.0
	refGroupHeight, refAxisRoom = 22.0, 16.0
)

// drawReference draws the reference panel from top and returns its bottom.
// results are reference outcomes, in the table's order; a group starts
// where Scenario.Group changes, as in printTable.
func drawReference(c *canvas, results []outcome, top float64) float64 {
	// /fast p99 on a log axis: the rows span more than a decade, and their
	// ratios to the baseline are what the README reads off them.
	fastLo, fastHi, jobHi := math.Inf(1), 0.0, 0.0
	for _, o := range results {
		r := o.Rows[0]
		if r.NA != "" {
			continue
		}
		for _, d := range []float64{millis(r.Fast.P99), millis(r.FastP99Lo), millis(r.FastP99Hi)} {
			if d > 0 {
				fastLo, fastHi = min(fastLo, d), max(fastHi, d)
			}
		}
		if r.Job.N > 0 {
			jobHi = max(jobHi, millis(r.Job.P50))
		}
	}
	if fastHi == 0 { // nothing ran: any axis will do
		fastLo, fastHi = 1, 10
	}
	fastLo, fastHi = niceBelow(fastLo), niceAbove(fastHi)
	if fastHi <= fastLo {
		fastHi = niceAbove(fastLo * 1.01)
	}
	fastX := func(ms float64) float64 {
		ms = min(max(ms, fastLo), fastHi)
		return refFastLeft + refFastWidth*math.Log10(ms/fastLo)/math.Log10(fastHi/fastLo)
	}
	jobStep, jobTop := linearAxis(max(jobHi, 1), 3) // a narrow column: few labels
	jobX := func(ms float64) float64 { return refJobLeft + refJobWidth*min(ms, jobTop)/jobTop }

	c.text(ovMargin, top+16, `font-size="14" font-weight="bold"`, "Reference scenarios: /fast p99 and job p50")
	x := c.legend(ovMargin, top+36, fastColour, "/fast p99 (median run)")
	x = c.legend(x, top+36, "whisker", "lowest to highest run")
	x = c.legend(x, top+36, "baseline", `the group's "only /fast" p99`)
	c.legend(x, top+36, jobColour, "job p50")
	c.text(refFastLeft, top+58, `font-weight="bold"`, "/fast p99, ms (log scale)")
	c.text(refJobLeft, top+58, `font-weight="bold"`, "job p50, ms")

	// Grid and tick labels above and below the rows, so that a tall panel
	// reads without scrolling back.
	rowsTop := top + 62 + refAxisRoom
	groups := 0
	for i, o := range results {
		if i == 0 || o.Scenario.Group != results[i-1].Scenario.Group {
			groups++
		}
	}
	rowsBottom := rowsTop + float64(groups)*refGroupHeight + float64(len(results))*refRowHeight
	axis := func(x float64, label string) {
		c.line(x, rowsTop, x, rowsBottom, `stroke="`+gridColour+`"`)
		c.text(x, rowsTop-4, `text-anchor="middle" fill="`+mutedColour+`"`, label)
		c.text(x, rowsBottom+12, `text-anchor="middle" fill="`+mutedColour+`"`, label)
	}
	for _, v := range logTicks(fastLo, fastHi) {
		axis(fastX(v), fmt.Sprintf("%g", v))
	}
	for v := 0.0; v <= jobTop*(1+1e-9); v += jobStep {
		axis(jobX(v), fmt.Sprintf("%g", v))
	}

	y := rowsTop
	for start := 0; start < len(results); {
		end := start + 1
		for end < len(results) && results[end].Scenario.Group == results[start].Scenario.Group {
			end++
		}
		group := results[start:end:end]
		c.text(ovMargin, y+15, `font-weight="bold"`, group[0].Scenario.Group)
		y += refGroupHeight
		groupTop := y
		for i, o := range group {
			if i%2 == 0 {
				c.rect(ovMargin-6, y, ovWidth-2*ovMargin+12, refRowHeight, `fill="#000" fill-opacity="0.035"`)
			}
			drawReferenceBars(c, o, y, fastX, jobX)
			y += refRowHeight
		}
		// The baseline goes over the bars, so that it shows where they
		// cross it, and under the labels, so that they stay legible.
		for _, o := range group {
			if r := o.Rows[0]; o.Scenario.Mode == "" && r.NA == "" {
				bx := fastX(millis(r.Fast.P99))
				c.line(bx, groupTop-2, bx, y, `stroke="`+baselineColour+`" stroke-width="1.5" stroke-dasharray="4 3"`)
				c.text(bx+4, groupTop-6, `font-size="10" fill="`+baselineColour+`"`, "only /fast "+ms(r.Fast.P99))
				break
			}
		}
		for i, o := range group {
			drawReferenceLabels(c, o, groupTop+float64(i)*refRowHeight, fastX, jobX)
		}
		start = end
	}
	return rowsBottom + refAxisRoom
}

// fastLabel is a reference row's /fast p99 as the table prints it, with
// its range over the runs and the table's stall note.
func fastLabel(r row) string {
	label := ms(r.Fast.P99)
	if r.Runs > 1 {
		label += fmt.Sprintf(" (%s–%s)", ms(r.FastP99Lo), ms(r.FastP99Hi))
	}
	if r.LagMax > stallLag {
		label += ", stalled" // the load generator itself was held up
	}
	return label
}

// drawReferenceBars draws one scenario's /fast p99 bar and whisker and its
// job p50 bar in the row from y.
func drawReferenceBars(c *canvas, o outcome, y float64, fastX, jobX func(float64) float64) {
	r := o.Rows[0]
	if r.NA != "" {
		return
	}
	mid := y + refRowHeight/2
	c.bar(refFastLeft, mid-refBarHeight/2, fastX(millis(r.Fast.P99))-refFastLeft, refBarHeight,
		"bar fast-p99", fastColour, o.Scenario.label()+": /fast p99 "+fastLabel(r)+" ms")
	if r.Runs > 1 {
		lo, hi := fastX(millis(r.FastP99Lo)), fastX(millis(r.FastP99Hi))
		c.line(lo, mid, hi, mid, `class="whisker" stroke="#222"`)
		c.line(lo, mid-3.5, lo, mid+3.5, `stroke="#222"`)
		c.line(hi, mid-3.5, hi, mid+3.5, `stroke="#222"`)
	}
	if r.Job.N > 0 {
		c.bar(refJobLeft, mid-refBarHeight/2, jobX(millis(r.Job.P50))-refJobLeft, refBarHeight,
			"bar job-p50", jobColour, o.Scenario.label()+": job p50 "+ms(r.Job.P50)+" ms")
	}
}

// drawReferenceLabels draws one scenario's name and, after its bars, their
// values, or why it could not run, in the row from y.
func drawReferenceLabels(c *canvas, o outcome, y float64, fastX, jobX func(float64) float64) {
	r := o.Rows[0]
	mid := y + refRowHeight/2
	c.text(refNameRight, mid+4, `text-anchor="end"`, r.Name)
	if r.NA != "" {
		c.text(refFastLeft+4, mid+4, `font-style="italic" fill="`+mutedColour+`" stroke="white" stroke-width="3" paint-order="stroke"`, truncate(r.NA, 90))
		return
	}
	end := fastX(millis(r.Fast.P99))
	if r.Runs > 1 {
		end = max(end, fastX(millis(r.FastP99Hi)))
	}
	c.text(end+5, mid+4, valueLabel, fastLabel(r))
	if r.Job.N == 0 {
		c.text(refJobLeft+4, mid+4, `fill="`+mutedColour+`"`, "no jobs")
		return
	}
	c.text(jobX(millis(r.Job.P50))+4, mid+4, valueLabel, ms(r.Job.P50))
}
