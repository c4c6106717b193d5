package view

import (
	"time"

	"github.com/ralph-loop/ralph/runfiles"
)

// PacedText is a pacing wait as every view says it: "paced until 15:04
// (tokens_per_hour: 1200/1000)", the until in local time. A wait that ends
// on another day than it began (a day window's) names the day too, so that
// tomorrow's 09:00 does not read as this morning's.
func PacedText(p runfiles.PacedRecord) string {
	until := p.Until.Local()
	began := until.Add(-time.Duration(p.WaitMS) * time.Millisecond)
	layout := "15:04"
	if until.YearDay() != began.YearDay() || until.Year() != began.Year() {
		layout = "Mon Jan 2 15:04"
	}
	return "paced until " + until.Format(layout) + " (" + p.Text() + ")"
}
