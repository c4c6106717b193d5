package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The usage printed with a command-line mistake must name a command a user
// can run: kong's own said `Run "ralph loop (run) --help"`.
func TestUsageErrorHintIsARunnableCommand(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"loop", "--max-iteration", "3"}, "ralph loop --help"},
		{[]string{"run", "--max-iteration", "3"}, "ralph loop --help"},
		{[]string{"memory", "search"}, "ralph memory search --help"},
		{[]string{"hats", "shw"}, "ralph hats --help"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, strings.NewReader(""), &stdout, &stderr)
			assert.Equal(t, 3, code)
			assert.Contains(t, stderr.String(), "ralph: hint: run `"+tc.want+"` for usage and examples\n")
			assert.NotContains(t, stderr.String(), "(run)", "an alias in parentheses is not something to type")
			assert.NotContains(t, stderr.String(), `Run "`, "one hint, in ralph's own form")
			assert.Contains(t, stderr.String(), "Usage: "+strings.TrimSuffix(tc.want, " --help"))
			assert.Empty(t, stdout.String())
		})
	}
}

func TestFullHelpStillShowsTheAlias(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 0, run([]string{"loop", "--help"}, strings.NewReader(""), &stdout, &stderr))
	assert.Contains(t, stdout.String(), "Usage: ralph loop (run)")
}
