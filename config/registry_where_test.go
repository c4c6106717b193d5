package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A hat file's place splits at its last colon, so a Windows path with a
// drive letter keeps its drive.
func TestSplitWhere(t *testing.T) {
	cases := []struct {
		where string
		file  string
		line  int
	}{
		{"hats/builder.md:12", "hats/builder.md", 12},
		{`C:\work\repo\ralph.yml:7`, `C:\work\repo\ralph.yml`, 7},
		{`C:\work\repo\ralph.yml`, `C:\work\repo\ralph.yml`, 0},
		{"ralph.yml", "ralph.yml", 0},
		{"odd:name.yml", "odd:name.yml", 0},
	}
	for _, tc := range cases {
		t.Run(tc.where, func(t *testing.T) {
			file, line := splitWhere(tc.where)
			assert.Equal(t, tc.file, file)
			assert.Equal(t, tc.line, line)
		})
	}
}
