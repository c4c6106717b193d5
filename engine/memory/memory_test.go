package memory

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func store(t *testing.T) Store {
	clock := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	return Store{Path: filepath.Join(t.TempDir(), "agent", "memories.md"), Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Minute)
		return clock
	}}
}

func TestAddListRemove(t *testing.T) {
	s := store(t)
	a, err := s.Add("Run go test with -race; the cache hides data races.", "pattern", []string{"go", "tests"})
	require.NoError(t, err)
	b, err := s.Add("We chose SQLite over Postgres for the CLI.\nNo server to run.", "decision", nil)
	require.NoError(t, err)

	ms, err := s.List()
	require.NoError(t, err)
	require.Len(t, ms, 2)
	assert.Equal(t, a, ms[0])
	assert.Equal(t, b, ms[1], "multi-line text survives the round trip")

	gone, err := s.Remove(a.ID)
	require.NoError(t, err)
	assert.Equal(t, a, gone, "Remove returns what it removed")
	ms, _ = s.List()
	assert.Equal(t, []Memory{b}, ms)
	_, err = s.Remove("m-nope")
	assert.ErrorContains(t, err, "no memory")
}

func TestAddRejectsBadInput(t *testing.T) {
	s := store(t)
	_, err := s.Add("  ", "", nil)
	assert.ErrorContains(t, err, "empty")
	_, err = s.Add("x", "rumour", nil)
	assert.ErrorContains(t, err, `unknown memory type "rumour"`)
	_, err = s.Add("x", "fix", []string{"two words"})
	assert.ErrorContains(t, err, "one word")
}

func TestConcurrentAddsKeepEveryMemory(t *testing.T) {
	s := store(t)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Add(strings.Repeat("x", i+1), "context", nil)
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	ms, err := s.List()
	require.NoError(t, err)
	assert.Len(t, ms, 20)
}

func TestSearchAndSelect(t *testing.T) {
	s := store(t)
	old, _ := s.Add("Migrations live in db/migrations and run with make migrate.", "context", []string{"db"})
	_, _ = s.Add("The flaky test in cache_test.go needs a fake clock.", "fix", []string{"tests"})
	newest, _ := s.Add("Prefer table tests.", "pattern", []string{"tests"})
	ms, _ := s.List()

	found, err := Search(ms, "how do I run the database migrations?")
	require.NoError(t, err)
	require.Len(t, found, 1)
	assert.Equal(t, old.ID, found[0].ID)

	got := Select(ms, "migrations", 1000)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	require.Len(t, lines, 3)
	assert.Contains(t, lines[0], "Migrations", "the most relevant first")
	assert.Contains(t, lines[1], newest.Text, "then the newest")

	small := Select(ms, "migrations", 80)
	assert.Contains(t, small, "Migrations")
	assert.Contains(t, small, "2 more memories did not fit")
	assert.Contains(t, Select(ms, "migrations", 125), "(1 more memory did not fit; `ralph memory search WORDS` finds it)")
	assert.Empty(t, Select(ms, "x", 0))
}

// ids returns the ids of ms, to compare orders.
func ids(ms []Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func TestSearchCountsShortTermsAndTags(t *testing.T) {
	s := store(t)
	tagged, _ := s.Add("Schema changes go through a review.", "decision", []string{"db"})
	inText, _ := s.Add("The db runs in a container on port 5433.", "context", nil)
	_, _ = s.Add("Prefer table tests.", "pattern", []string{"tests"})
	_, _ = s.Add("Retry on 429 with backoff.", "fix", []string{"api"})
	ms, _ := s.List()

	found, err := Search(ms, "db")
	require.NoError(t, err)
	assert.Equal(t, []string{tagged.ID, inText.ID}, ids(found),
		"a two-letter term counts, and a tag outweighs a word of the text; memories without it are left out")

	found, err = Search(ms, "fix")
	require.NoError(t, err)
	require.Len(t, found, 1, "the type counts like a tag")
}

func TestSearchRanksBestMatchFirst(t *testing.T) {
	s := store(t)
	substring, _ := s.Add("Run the migrations before the server.", "context", nil)
	both, _ := s.Add("The migrate target runs db migrations.", "context", nil)
	word, _ := s.Add("The migrate tool is in tools/.", "context", nil)
	newerWord, _ := s.Add("migrate with care.", "context", nil)
	ms, _ := s.List()

	found, err := Search(ms, "migrate db")
	require.NoError(t, err)
	assert.Equal(t, []string{both.ID, newerWord.ID, word.ID}, ids(found),
		"more terms matched first, then the newest among equals")

	found, err = Search(ms, "migrat")
	require.NoError(t, err)
	assert.Equal(t, []string{newerWord.ID, word.ID, both.ID, substring.ID}, ids(found),
		"a part of a word matches too")

	found, err = Search(ms, "migrations")
	require.NoError(t, err)
	assert.Equal(t, []string{both.ID, substring.ID}, ids(found))

	found, err = Search(ms, "migrate migrations")
	require.NoError(t, err)
	assert.Equal(t, both.ID, found[0].ID)
}

func TestSearchShortTermsDoNotMatchInsideWords(t *testing.T) {
	s := store(t)
	_, _ = s.Add("The algorithm is quadratic.", "context", nil)
	golang, _ := s.Add("Build with go 1.26.", "context", nil)
	ms, _ := s.List()
	found, err := Search(ms, "go")
	require.NoError(t, err)
	assert.Equal(t, []string{golang.ID}, ids(found))
}

func TestSearchStopWordsAloneStillSearch(t *testing.T) {
	s := store(t)
	the, _ := s.Add("The end.", "context", nil)
	_, _ = s.Add("Fin.", "context", nil)
	ms, _ := s.List()
	found, err := Search(ms, "the")
	require.NoError(t, err)
	assert.Equal(t, []string{the.ID}, ids(found))
}

func TestSearchRejectsAnEmptyQuery(t *testing.T) {
	s := store(t)
	_, _ = s.Add("Anything.", "context", nil)
	ms, _ := s.List()
	for _, q := range []string{"", "   ", "?!"} {
		_, err := Search(ms, q)
		assert.ErrorIs(t, err, ErrEmptyQuery, "query %q", q)
	}
}
