package flagvalue

import (
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRuntime(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"5400": 90 * time.Minute, "0": 0, "90m": 90 * time.Minute, "2h30m": 150 * time.Minute, "45s": 45 * time.Second,
	} {
		got, err := ParseRuntime(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"-1", "-2h", "soon", ""} {
		_, err := ParseRuntime(in)
		assert.Error(t, err, in)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 22, 15, 30, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Time
	}{
		{"10m", now.Add(-10 * time.Minute)},
		{"1h30m", now.Add(-90 * time.Minute)},
		{"2026-11-22T10:00:00Z", time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)},
		{"2026-11-22T12:00:00+02:00", time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)},
		{"2026-11-22 10:00", time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)},
		{"2026-11-21", time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)},
		{"09:15", time.Date(2026, 11, 22, 9, 15, 0, 0, time.UTC)},
		{"09:15:30", time.Date(2026, 11, 22, 9, 15, 30, 0, time.UTC)},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSince(tc.in, now)
			require.NoError(t, err)
			assert.True(t, tc.want.Equal(got), "got %s, want %s", got, tc.want)
		})
	}
}

func TestOptionalValue(t *testing.T) {
	type cli struct {
		Worktree OptionalValue `placeholder:"[NAME]"`
		Prompt   string        `short:"p"`
	}
	cases := []struct {
		args []string
		want OptionalValue
	}{
		{nil, OptionalValue{}},
		{[]string{"--worktree"}, OptionalValue{Given: true}},
		{[]string{"--worktree", "fix-it"}, OptionalValue{Given: true, Value: "fix-it"}},
		{[]string{"--worktree=fix-it"}, OptionalValue{Given: true, Value: "fix-it"}},
		{[]string{"--worktree", "-p", "x"}, OptionalValue{Given: true}},
		{[]string{"--worktree", "--prompt", "x"}, OptionalValue{Given: true}},
		{[]string{"-p", "x", "--worktree"}, OptionalValue{Given: true}},
	}
	for _, tc := range cases {
		var c cli
		parser, err := kong.New(&c)
		require.NoError(t, err)
		_, err = parser.Parse(tc.args)
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.want, c.Worktree, "%v", tc.args)
	}
	var c cli
	parser, err := kong.New(&c)
	require.NoError(t, err)
	_, err = parser.Parse([]string{"--worktree="})
	assert.ErrorContains(t, err, "the value after '=' is empty")
}

// TestParseAge takes days and weeks before a Go duration, and refuses what
// is neither.
func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"7d": 7 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "1w2d": 9 * 24 * time.Hour,
		"1d12h": 36 * time.Hour, "36h": 36 * time.Hour, "90m": 90 * time.Minute, "0s": 0,
	} {
		got, err := ParseAge(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, in := range []string{"", "d", "7", "7x", "2d1w", "-1d", "1d-5h", "week"} {
		_, err := ParseAge(in)
		assert.Error(t, err, in)
	}
}
