package view

import "github.com/ralph-loop/ralph/runfiles"

// PacedText is a pacing wait as every view says it: "paced until 15:04
// (tokens_per_hour: 1200/1000)", the until in local time.
func PacedText(p runfiles.PacedRecord) string {
	return "paced until " + p.Until.Local().Format("15:04") + " (" + p.Text() + ")"
}
