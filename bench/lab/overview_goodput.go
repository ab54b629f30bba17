package main

import (
	"fmt"
	"slices"
)

// The goodput panel's plot area.
const (
	goodLeft, goodRight = 70.0, 990.0
	goodHeight          = 240.0
)

// drawGoodput draws the goodput panel from top and returns its bottom:
// for each overload phase, one bar per scenario, its goodput, against
// capacity (jobs/s). results are phased outcomes in the table's order;
// each keeps its colour and its slot in every phase, also where it has no
// bar, so that a missing bar reads as missing.
func drawGoodput(c *canvas, results []outcome, capacity float64, top float64) float64 {
	var phases []float64
	for _, o := range results {
		if len(o.Scenario.Phases) > len(phases) {
			phases = o.Scenario.Phases
		}
	}
	highest := capacity * 1.1 // the capacity line below the top, not on it
	for _, o := range results {
		for _, r := range o.Rows {
			if r.NA == "" {
				highest = max(highest, r.Goodput)
			}
		}
	}
	step, yTop := linearAxis(max(highest, 1e-9), 5)
	plotTop := top + 48
	y := func(v float64) float64 { return plotTop + goodHeight*(1-min(v, yTop)/yTop) }
	groupWidth := (goodRight - goodLeft) / float64(max(len(phases), 1))
	barWidth := 0.75 * groupWidth / float64(len(results))

	c.text(ovMargin, top+16, `font-size="14" font-weight="bold"`, "Overload: goodput per phase (jobs/s answered in time)")
	c.text(ovMargin, top+34, `fill="`+mutedColour+`"`,
		"Each phase offers jobs at a multiple of the pool's capacity; a scenario's bars, left to right within a phase, follow the legend.")
	for i := range phases {
		if i%2 == 0 {
			c.rect(goodLeft+float64(i)*groupWidth, plotTop, groupWidth, goodHeight, `fill="#f3f3f3"`)
		}
	}
	for v := 0.0; v <= yTop*(1+1e-9); v += step {
		c.line(goodLeft, y(v), goodRight, y(v), `stroke="`+gridColour+`"`)
		c.text(goodLeft-6, y(v)+4, `text-anchor="end" fill="`+mutedColour+`"`, fmt.Sprintf("%g", v))
	}
	mid := plotTop + goodHeight/2
	c.text(ovMargin+10, mid, fmt.Sprintf(`text-anchor="middle" transform="rotate(-90 %.1f %.1f)"`, ovMargin+10, mid), "goodput, jobs/s")

	// Each phase's bars and the labels under it, then the capacity line
	// over the bars, then the bars' values over the line.
	type placed struct {
		x, goodput float64
	}
	var values []placed
	for i, m := range phases {
		left := goodLeft + float64(i)*groupWidth
		name := fmt.Sprintf("%g× capacity", m)
		if i > 0 && slices.Contains(phases[:i], m) {
			name = fmt.Sprintf("back to %g×", m)
		}
		c.text(left+groupWidth/2, plotTop+goodHeight+16, `text-anchor="middle" font-weight="bold"`, name)
		offered := false
		for k, o := range results {
			if i >= len(o.Rows) || o.Rows[i].NA != "" {
				continue
			}
			r := o.Rows[i]
			if !offered {
				offered = true
				c.text(left+groupWidth/2, plotTop+goodHeight+30, `text-anchor="middle" fill="`+mutedColour+`"`, fmt.Sprintf("%.1f jobs/s offered", r.Offered))
			}
			x := left + 0.125*groupWidth + float64(k)*barWidth
			title := fmt.Sprintf("%s, %s: goodput %.1f jobs/s", o.Scenario.label(), name, r.Goodput)
			c.bar(x+1, y(r.Goodput), barWidth-2, y(0)-y(r.Goodput), "bar goodput", ovPalette[k%len(ovPalette)], title)
			values = append(values, placed{x + barWidth/2, r.Goodput})
		}
	}
	c.line(goodLeft, y(0), goodRight, y(0), `stroke="#222"`)
	c.line(goodLeft, y(capacity), goodRight, y(capacity), `stroke="#222" stroke-width="1.5" stroke-dasharray="4 3"`)
	for _, v := range values {
		c.text(v.x, y(v.goodput)-3, `text-anchor="middle" `+valueLabel, fmt.Sprintf("%.1f", v.goodput))
	}

	legendTop := plotTop + goodHeight + 56
	c.legend(goodLeft, legendTop, "capacity", fmt.Sprintf("capacity: %.1f jobs/s", capacity))
	for k, o := range results {
		label := o.Scenario.label()
		if r := o.Rows[0]; r.NA != "" {
			label += " (" + truncate(r.NA, 80) + ")"
		}
		c.legend(goodLeft, legendTop+float64(k+1)*16, ovPalette[k%len(ovPalette)], label)
	}
	return legendTop + float64(len(results))*16
}
