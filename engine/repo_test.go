package engine

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/criteria"
)

// countingRepo is a workspace whose every look sees a new fingerprint,
// and that counts the looks.
type countingRepo struct{ looks int }

func (r *countingRepo) Snapshot(context.Context) (Snapshot, error) {
	r.looks++
	return Snapshot{Head: "h", Fingerprint: strconv.Itoa(r.looks)}, nil
}

func (r *countingRepo) CommitsBetween(context.Context, string, string) ([]Commit, error) {
	return nil, nil
}

// One look at the workspace per iteration: the look an iteration ends
// with is the next one's start, unless a check ran a command in between.
func TestOneWorkspaceLookPerIteration(t *testing.T) {
	t.Run("no checks", func(t *testing.T) {
		repo := &countingRepo{}
		e := newTestEngine(t, t.TempDir(), happy(), settings(), func(o *Options) { o.Repo = repo })
		_, err := e.Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 1+3, repo.looks, "the start's, then one after each of 3 iterations")
	})
	t.Run("a gate in between", func(t *testing.T) {
		repo := &countingRepo{}
		s := settings()
		s.Gates = []Gate{{Topic: "build.done", Criteria: []criteria.Spec{{Name: "tests", Type: "command", Command: "true"}}}}
		e := newTestEngine(t, t.TempDir(), happy(), s, func(o *Options) {
			o.Repo = repo
			o.Verify = func(context.Context, string, []criteria.Spec, criteria.Env) []criteria.Result {
				return []criteria.Result{{Name: "tests", Passed: true}}
			}
		})
		_, err := e.Run(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 1+3+1, repo.looks, "a fresh look before the iteration after build.done's gate, which may have written files")
	})
}
