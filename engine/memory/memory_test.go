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

	require.NoError(t, s.Remove(a.ID))
	ms, _ = s.List()
	assert.Equal(t, []Memory{b}, ms)
	assert.ErrorContains(t, s.Remove("m-nope"), "no memory")
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

	found := Search(ms, "how do I run the database migrations?")
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
	assert.Empty(t, Select(ms, "x", 0))
}
