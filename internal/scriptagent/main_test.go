package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestExpandTemplates(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	cases := map[string]string{
		"run {{run}}":                       "run 7",
		`"resetsAt":{{now+3}}`:              `"resetsAt":1800000003`,
		"{{now+0}} {{now+-5}} {{now+3600}}": "1800000000 1799999995 1800003600",
		"{{now}} {{now+x}} {{ run }}":       "{{now}} {{now+x}} {{ run }}", // not templates: left alone
	}
	for in, want := range cases {
		if got := expandTemplates(in, "7", now); got != want {
			t.Errorf("expandTemplates(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseScriptRefusesUnknownKeys(t *testing.T) {
	var sc script
	require.NoError(t, parseScript([]byte(`{"steps":[{"say":"hi","sleep_ms":5}]}`), &sc))
	require.Len(t, sc.Steps, 1)

	err := parseScript([]byte(`{"steps":[{"say":"hi","sleep":5}]}`), &script{})
	require.ErrorContains(t, err, `unknown field "sleep"`)
	require.Error(t, parseScript([]byte(`{"step":[]}`), &script{}), "a misspelt top-level key")
}
