package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// addMemory runs `ralph memory add` and returns the new id.
func (w *workspace) addMemory(args ...string) string {
	w.t.Helper()
	r := w.ralph(append([]string{"memory", "add"}, args...)...)
	require.Equal(w.t, 0, r.code, r.stderr)
	return strings.TrimSpace(r.stdout)
}

func TestMemorySearchFindsShortTermsBestFirst(t *testing.T) {
	w := newWorkspace(t)
	w.addMemory("Prefer table tests.", "--type", "pattern")
	inText := w.addMemory("The db runs in a container on port 5433.")
	tagged := w.addMemory("Schema changes need a review.", "--type", "decision", "--tag", "db")
	w.addMemory("Retry on 429.", "--type", "fix")

	r := w.ralph("memory", "search", "db")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stdout, "table tests", "a memory without the term is not a match")
	assert.NotContains(t, r.stdout, "Retry")
	first, second := strings.Index(r.stdout, tagged), strings.Index(r.stdout, inText)
	require.True(t, first >= 0 && second >= 0, r.stdout)
	assert.Less(t, first, second, "the tag match ranks above the word match")
}

func TestMemorySearchWithoutWordsIsAnError(t *testing.T) {
	w := newWorkspace(t)
	w.addMemory("Anything.")
	r := w.ralph("memory", "search", "")
	assert.Equal(t, 3, r.code)
	assert.Contains(t, r.stderr, "ralph: error: the search query has no words")
	assert.Contains(t, r.stderr, "ralph: hint:")
	assert.Contains(t, r.stderr, "ralph memory list")
	assert.Empty(t, r.stdout)
}

func TestMemoryRmSaysWhatItRemoved(t *testing.T) {
	w := newWorkspace(t)
	id := w.addMemory("Integration tests need TEST_DB_URL.\nSee the Makefile.", "--tag", "tests")
	r := w.ralph("memory", "rm", id)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "removed "+id+" (context #tests): Integration tests need TEST_DB_URL. …\n", r.stdout)
	assert.Contains(t, w.ralph("memory", "list").stdout, "no memories")
}
