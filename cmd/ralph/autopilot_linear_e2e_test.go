package main

import (
	"cmp"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/fakeforge"
	linearfake "github.com/ralph-loop/ralph/internal/fakeforge/linear"
)

// The Linear source end to end: the real binary works through a team's
// issues on the fake Linear API, with real git and the scripted agent.

const (
	linearKeyEnv       = "RALPH_E2E_LINEAR_KEY"
	linearKey          = "lin_api_E2eS3cretK3y0123456789abcdefghij"
	linearDeploySecret = "dpl-9f8e7d6c5b4a-secret"
)

// linearBacklog is the team ENG's backlog: four labelled Todo issues of
// different priorities, one more that waits for the lowest of them, one
// whose task fails its verification, and two ralph must leave alone.
func linearBacklog(f *linearfake.Fake) (ids map[string]string) {
	f.AddTeam("ENG", "Engineering")
	ids = map[string]string{}
	add := func(name string, is linearfake.Issue) { ids[name] = f.AddIssue("ENG", is) }
	ralph := []string{"ralph"}
	add("base", linearfake.Issue{Title: "Lay the base", Priority: 3, Labels: ralph})
	add("deploy", linearfake.Issue{Title: "Deploy it", Priority: 2, Labels: ralph})
	add("after", linearfake.Issue{Title: "Build on the base", Priority: 1, Labels: ralph})
	add("urgent", linearfake.Issue{Title: "Fix the outage", Priority: 1, Labels: ralph,
		Description: "The export is down.\n\n## Acceptance criteria\n- the export answers"})
	add("low", linearfake.Issue{Title: "Tidy the docs", Priority: 4, Labels: ralph})
	add("unlabelled", linearfake.Issue{Title: "Not for ralph", Priority: 1})
	add("backlog", linearfake.Issue{Title: "Not planned yet", Priority: 1, Labels: ralph, State: "Backlog"})
	f.Block(ids["base"], ids["after"])
	return ids
}

func TestAutopilotWorksThroughLinearIssues(t *testing.T) {
	t.Parallel()
	f := linearfake.New(t, linearKey)
	ids := linearBacklog(f)
	w := newAutopilotRepo(t, "  source:\n    type: linear\n    team: ENG\n    labels: [ralph]\n"+
		"    api_url: "+f.URL+"\n    token_env: "+linearKeyEnv+"\n"+
		"  verify:\n    - {type: command_succeeds, command: 'if [ -f "+ids["deploy"]+".txt ]; then "+
		`echo "deploying with $DEPLOY_TOKEN as $`+linearKeyEnv+` was refused"; exit 1; fi'}`+"\n")
	w.script(taskAgent("0"))
	env := []string{linearKeyEnv + "=" + linearKey, "DEPLOY_TOKEN=" + linearDeploySecret}

	// Without the key, the run says which variable to export.
	nokey := w.ralph("autopilot", "--dry-run")
	assert.Equal(t, 3, nokey.code)
	assert.Contains(t, nokey.stderr, "ralph: error: linear: $"+linearKeyEnv+" is not set, and it holds the API token\n"+
		"ralph: hint: export "+linearKeyEnv+"=")
	assert.Empty(t, f.Requests())

	// The dry run lists what would be claimed, and changes nothing.
	dry := w.ralphEnv(env, "autopilot", "--dry-run")
	require.Equal(t, 0, dry.code, "stdout:\n%s\nstderr:\n%s", dry.stdout, dry.stderr)
	at := -1
	for _, name := range []string{"urgent", "deploy", "base", "low", "after"} {
		i := strings.Index(dry.stdout, ids[name]+" ")
		assert.Greater(t, i, at, "the plan names %s after the issues of higher priority:\n%s", name, dry.stdout)
		at = i
	}
	for _, name := range []string{"unlabelled", "backlog"} {
		assert.NotContains(t, dry.stdout, ids[name], "the plan leaves %s out", name)
	}
	assert.Empty(t, f.Writes(), "the dry run calls no write endpoint")
	require.NotEmpty(t, f.Requests(), "the dry run read the backlog from the fake")

	// The first requests of the run are refused, as GitHub-style services
	// and Linear refuse them.
	f.RefuseNext(fakeforge.Refusal{Status: http.StatusTooManyRequests, Headers: map[string]string{"Retry-After": "1"},
		Body: `{"errors":[{"message":"Rate limit exceeded","extensions":{"code":"RATELIMITED"}}]}`})
	f.RateLimitNext(1, time.Now())
	r := w.ralphEnv(env, "autopilot")
	require.Equal(t, 1, r.code, "the deploy task fails its verification\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "ralph: autopilot: linear's rate limit: waiting 1s (POST /graphql answered 429, retry after 1)")
	assert.Regexp(t, `ralph: autopilot: linear's rate limit: waiting 1s \(POST /graphql answered 400 RATELIMITED, limit resets at \S+\)`, r.stderr)

	// The order of work: priorities (urgent, high, medium, then low or
	// the urgent one that waited for the medium one, whichever is ready
	// when the slot frees), and the dependency.
	assert.Equal(t, []string{ids["urgent"], ids["deploy"], ids["base"]}, startOrder(t, w)[:3])
	order := w.mergedOrder()
	assert.ElementsMatch(t, []string{ids["urgent"], ids["base"], ids["after"], ids["low"]}, order)
	assert.Less(t, slices.Index(order, ids["base"]), slices.Index(order, ids["after"]), "a blocker is merged before the issue it blocks")
	merges := mergeCommits(t, w)
	for _, id := range order {
		is := f.Issue(id)
		assert.Equal(t, "completed", is.StateType, "%s is closed", id)
		assert.Equal(t, f.Viewer(), is.Assignee, "%s was assigned to ralph's user", id)
		comments := f.Comments(id)
		require.Len(t, comments, 2, "%s: %q", id, comments)
		assert.Equal(t, "ralph is working on this.", comments[0])
		short := strings.TrimPrefix(comments[1], "Done by ralph: merged into main by ralph autopilot as ")
		assert.Len(t, short, 12, "%s: %q", id, comments[1])
		assert.True(t, strings.HasPrefix(merges[id], short), "%s's comment names its merge commit %s: %q", id, merges[id], comments[1])
	}

	deploy := f.Issue(ids["deploy"])
	assert.Equal(t, "Todo", deploy.State, "a failed task's issue stays open")
	assert.Empty(t, deploy.Assignee, "and is unassigned")
	comments := f.Comments(ids["deploy"])
	require.Len(t, comments, 2, "%q", comments)
	assert.Equal(t, "ralph is working on this.", comments[0])
	assert.True(t, strings.HasPrefix(comments[1], "ralph gave up on this: "), comments[1])
	assert.Contains(t, comments[1], "deploying with [redacted:DEPLOY_TOKEN] as [redacted:"+linearKeyEnv+"] was refused")

	for name, state := range map[string]string{"unlabelled": "Todo", "backlog": "Backlog"} {
		assert.Empty(t, f.Comments(ids[name]), name)
		assert.Empty(t, f.Issue(ids[name]).Assignee, name)
		assert.Equal(t, state, f.Issue(ids[name]).State, name)
	}

	// No secret reaches the fake, the output, .ralph/ or git.
	for _, req := range f.Requests() {
		assert.NotContains(t, req.Body, linearKey, "a request's body holds the API key")
		assert.NotContains(t, req.Body, linearDeploySecret, "a request's body holds DEPLOY_TOKEN")
	}
	for what, text := range map[string]string{"the dry run's stdout": dry.stdout, "the dry run's stderr": dry.stderr,
		"the run's stdout": r.stdout, "the run's stderr": r.stderr, "the repository's history": git(t, w.dir, "log", "-p", "--all")} {
		assert.NotContains(t, text, linearKey, what)
		assert.NotContains(t, text, linearDeploySecret, what)
	}
	for path, text := range ralphFiles(t, w.dir) {
		assert.NotContains(t, text, linearKey, path)
		assert.NotContains(t, text, linearDeploySecret, path)
	}
	w.assertCleanAfterRunExcept(ids["deploy"])
}

// startOrder is the tasks in the order their agents started.
func startOrder(t *testing.T, w *workspace) []string {
	t.Helper()
	type start struct {
		task string
		at   int64
	}
	var starts []start
	for task, runs := range w.agentTimes() {
		for _, r := range runs {
			starts = append(starts, start{task, r.start})
		}
	}
	slices.SortFunc(starts, func(a, b start) int { return cmp.Compare(a.at, b.at) })
	var out []string
	for _, s := range starts {
		out = append(out, s.task)
	}
	return out
}

// mergeCommits are the commits of ralph's merges into main, by task.
func mergeCommits(t *testing.T, w *workspace) map[string]string {
	t.Helper()
	out := map[string]string{}
	merge := regexp.MustCompile(`^(\S+) ralph: merge (\S+)`)
	for line := range strings.Lines(git(t, w.dir, "log", "--first-parent", "--format=%H %s", "main")) {
		if m := merge.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			out[m[2]] = m[1]
		}
	}
	return out
}

// assertCleanAfterRunExcept checks that the checkout is clean and that no
// task's branch is left but the failed ones', which are kept for
// inspection.
func (w *workspace) assertCleanAfterRunExcept(failed ...string) {
	t := w.t
	t.Helper()
	assert.Empty(t, strings.TrimSpace(git(t, w.dir, "status", "--porcelain")), "the checkout is clean")
	var left []string
	for line := range strings.Lines(git(t, w.dir, "branch", "--list", "ralph/*", "--format=%(refname:short)")) {
		left = append(left, strings.TrimPrefix(strings.TrimSpace(line), "ralph/"))
	}
	assert.ElementsMatch(t, failed, left, "only the failed tasks' branches are left")
}
