package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/criteria"
)

var defaultCluster = config.Cluster{Replicas: 1, Remote: "origin"}

// withDeliveryDefaults is a with the defaults of the delivery keys where
// it leaves them out.
func withDeliveryDefaults(a config.Autopilot) config.Autopilot {
	if a.Deliver == "" {
		a.Deliver = "merge"
	}
	if a.Remote == "" {
		a.Remote = "origin"
	}
	if a.PR.CloseOn == "" {
		a.PR.CloseOn = "merged"
	}
	if a.PR.PollSeconds == 0 {
		a.PR.PollSeconds = config.DefaultPollSeconds
	}
	return a
}

func TestLoadBytesAutopilot(t *testing.T) {
	tests := []struct {
		name string
		data string
		want config.Autopilot
	}{
		{
			name: "defaults",
			data: "autopilot:\n",
			want: config.Autopilot{Source: config.TaskSource{Type: "tk"}, Parallel: 1, Merge: "merge", Retries: 1, WorktreesDir: ".worktrees", Cluster: defaultCluster},
		},
		{
			name: "every key",
			data: "autopilot:\n  source: beads\n  parallel: 3\n  max_tasks: 20\n  base_branch: main\n  merge: squash\n  retries: 0\n" +
				"  verify: [tests_pass]\n  worktrees_dir: wt\n  trust_task_commands: true\n",
			want: config.Autopilot{Source: config.TaskSource{Type: "beads"}, Parallel: 3, MaxTasks: 20, BaseBranch: "main",
				Merge: "squash", Verify: []criteria.Spec{{Type: "tests_pass"}}, WorktreesDir: "wt", TrustTasks: true, Cluster: defaultCluster},
		},
		{
			name: "a cluster",
			data: "autopilot:\n  cluster:\n    nats: nats://h1:4222,nats://h2:4222\n    creds: ~/w.creds\n    replicas: 3\n    remote: shared\n",
			want: config.Autopilot{Source: config.TaskSource{Type: "tk"}, Parallel: 1, Merge: "merge", Retries: 1, WorktreesDir: ".worktrees",
				Cluster: config.Cluster{NATS: "nats://h1:4222,nats://h2:4222", Creds: "~/w.creds", Replicas: 3, Remote: "shared"}},
		},
		{
			name: "a source mapping",
			data: "autopilot:\n  source: {type: checklist, path: TODO.md}\n",
			want: config.Autopilot{Source: config.TaskSource{Type: "checklist", Path: "TODO.md"}, Parallel: 1, Merge: "merge", Retries: 1, WorktreesDir: ".worktrees", Cluster: defaultCluster},
		},
		{
			name: "a command source",
			data: "autopilot:\n  source: {type: command, list: ./list.sh, close: ./close.sh}\n",
			want: config.Autopilot{Source: config.TaskSource{Type: "command", List: "./list.sh", Close: "./close.sh"}, Parallel: 1, Merge: "merge", Retries: 1, WorktreesDir: ".worktrees", Cluster: defaultCluster},
		},
		{
			name: "a command source's files",
			data: "autopilot:\n  source: {type: command, list: ./list.sh, close: ./close.sh, files: [tasks/, ./board/done.json]}\n",
			want: config.Autopilot{Source: config.TaskSource{Type: "command", List: "./list.sh", Close: "./close.sh", Files: []string{"tasks", "board/done.json"}},
				Parallel: 1, Merge: "merge", Retries: 1, WorktreesDir: ".worktrees", Cluster: defaultCluster},
		},
		{
			name: "a command source's show",
			data: "autopilot:\n  source: {type: command, list: ./list.sh, show: ./show.sh \"$RALPH_TASK_ID\", close: ./close.sh}\n",
			want: config.Autopilot{Source: config.TaskSource{Type: "command", List: "./list.sh", Show: `./show.sh "$RALPH_TASK_ID"`, Close: "./close.sh"}, Parallel: 1, Merge: "merge", Retries: 1, WorktreesDir: ".worktrees", Cluster: defaultCluster},
		},
		{
			name: "a github source",
			data: "autopilot:\n  source: {type: github, repo: acme/app, labels: [ralph], token_env: ACME_TOKEN, api_url: https://github.acme.test/api/v3}\n",
			want: config.Autopilot{Source: config.TaskSource{Type: "github", Repo: "acme/app", Labels: []string{"ralph"}, TokenEnv: "ACME_TOKEN", APIURL: "https://github.acme.test/api/v3"},
				Parallel: 1, Merge: "merge", Retries: 1, WorktreesDir: ".worktrees", Cluster: defaultCluster},
		},
		{
			name: "a linear source",
			data: "autopilot:\n  source: {type: linear, team: ENG, states: [Todo, Backlog], assignee: me@acme.test}\n",
			want: config.Autopilot{Source: config.TaskSource{Type: "linear", Team: "ENG", States: []string{"Todo", "Backlog"}, Assignee: "me@acme.test"},
				Parallel: 1, Merge: "merge", Retries: 1, WorktreesDir: ".worktrees", Cluster: defaultCluster},
		},
		{
			name: "pull requests",
			data: "autopilot:\n  deliver: pr\n  remote: upstream\n  pr: {close_on: opened, labels: [ralph, bot], forge: gitlab, project: acme/app, token_env: GL, poll_seconds: 1}\n",
			want: config.Autopilot{Source: config.TaskSource{Type: "tk"}, Parallel: 1, Merge: "merge", Retries: 1, WorktreesDir: ".worktrees", Cluster: defaultCluster,
				Deliver: "pr", Remote: "upstream", PR: config.PullRequests{CloseOn: "opened", Labels: []string{"ralph", "bot"}, Forge: "gitlab", Project: "acme/app", TokenEnv: "GL", PollSeconds: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.LoadBytes("ralph.yml", []byte(tt.data))
			require.NoError(t, err)
			if tt.want.Verify == nil {
				assert.Empty(t, c.Autopilot.Verify)
				c.Autopilot.Verify = nil
			}
			assert.Equal(t, withDeliveryDefaults(tt.want), c.Autopilot)
		})
	}
}

func TestPullRequestsTakeWhatTheyLeaveOutFromASourceOfTheirForge(t *testing.T) {
	c, err := config.LoadBytes("ralph.yml", []byte("autopilot:\n  source: {type: github, repo: acme/app, token_env: ACME, api_url: https://ghe.test/api/v3}\n  deliver: pr\n"))
	require.NoError(t, err)
	assert.Equal(t, config.PullRequests{CloseOn: "merged", Forge: "github", Repo: "acme/app", APIURL: "https://ghe.test/api/v3", TokenEnv: "ACME", PollSeconds: 30},
		c.Autopilot.PullRequestTarget())
	c, err = config.LoadBytes("ralph.yml", []byte("autopilot:\n  source: {type: linear, team: ENG, token_env: LIN}\n  deliver: pr\n  pr: {forge: gitlab, project: acme/app}\n"))
	require.NoError(t, err)
	assert.Equal(t, config.PullRequests{CloseOn: "merged", Forge: "gitlab", Project: "acme/app", TokenEnv: "GITLAB_TOKEN", PollSeconds: 30},
		c.Autopilot.PullRequestTarget(), "a linear source's token is not GitLab's")
}

func TestLoadBytesAutopilotProblems(t *testing.T) {
	runProblemCases(t, []problemCase{
		{
			name: "parallel below one",
			data: "autopilot:\n  parallel: 0\n",
			want: config.Problem{File: "ralph.yml", Line: 2, Msg: "autopilot.parallel must be at least 1, got 0", Hint: "use 1 or more, e.g. parallel: 3"},
		},
		{
			name: "pull requests followed without a pause",
			data: "autopilot:\n  deliver: pr\n  pr:\n    forge: github\n    repo: acme/app\n    poll_seconds: 0\n",
			want: config.Problem{File: "ralph.yml", Line: 6, Msg: "autopilot.pr.poll_seconds must be at least 1, got 0", Hint: "use 1 or more, e.g. poll_seconds: 60"},
		},
		{
			name: "unknown source",
			data: "autopilot:\n  source: jira\n",
			want: config.Problem{File: "ralph.yml", Line: 2, Msg: `autopilot.source: unknown value "jira"`, Hint: "use one of: tk, beads, prd, checklist, command, github, gitlab, linear"},
		},
		{
			name: "command source without close",
			data: "autopilot:\n  source:\n    type: command\n    list: ./list.sh\n",
			want: config.Problem{File: "ralph.yml", Line: 3, Msg: "autopilot.source: a command source needs list and close", Hint: "give at least list: and close: commands for a command source"},
		},
		{
			name: "a command source's file outside the repository",
			data: "autopilot:\n  source:\n    type: command\n    list: ./list.sh\n    close: ./close.sh\n    files:\n      - tasks\n      - ../board.json\n",
			want: config.Problem{File: "ralph.yml", Line: 8, Msg: `autopilot.source.files: "../board.json" is not a path inside the repository`,
				Hint: "write a path relative to the repository's root, inside it, e.g. tasks/"},
		},
		{
			name: "files for a source that names its own",
			data: "autopilot:\n  source: {type: prd, files: [prd.json]}\n",
			want: config.Problem{File: "ralph.yml", Line: 2, Msg: "autopilot.source: files is for a command source",
				Hint: "leave files: out: only a command source's files are unknown to ralph; prd names its own"},
		},
		{
			name: "show for a source that is not a command source",
			data: "autopilot:\n  source: {type: checklist, show: ./show.sh}\n",
			want: config.Problem{File: "ralph.yml", Line: 2, Msg: "autopilot.source: show is for a command source",
				Hint: "leave show: out: only a command source runs a command to show a task"},
		},
		{
			name: "unknown merge mode",
			data: "autopilot:\n  merge: octopus\n",
			want: config.Problem{File: "ralph.yml", Line: 2, Msg: `autopilot.merge: unknown value "octopus"`, Hint: "use one of: merge, rebase, squash"},
		},
		{
			name: "misspelt key",
			data: "autopilot:\n  paralel: 2\n",
			want: config.Problem{File: "ralph.yml", Line: 2, Msg: `unknown key "paralel" in autopilot; did you mean "parallel"?`, Hint: `rename it to "parallel", or remove it`},
		},
		{
			name: "no replica",
			data: "autopilot:\n  cluster:\n    replicas: 0\n",
			want: config.Problem{File: "ralph.yml", Line: 3, Msg: "autopilot.cluster.replicas must be at least 1, got 0", Hint: "use 1 or more, e.g. replicas: 3"},
		},
		{
			name: "a github source without its repository",
			data: "autopilot:\n  source: {type: github, labels: [ralph]}\n",
			want: config.Problem{File: "ralph.yml", Line: 2, Msg: "autopilot.source: a github source needs repo",
				Hint: "say which backlog, e.g. source: {type: github, repo: owner/name, labels: [ralph]}"},
		},
		{
			name: "a repository that is not owner/name",
			data: "autopilot:\n  source:\n    type: github\n    repo: https://github.com/acme/app\n",
			want: config.Problem{File: "ralph.yml", Line: 4, Msg: `autopilot.source.repo: "https://github.com/acme/app" is not owner/name`,
				Hint: "write the repository as owner/name, e.g. ralph-loop/ralph"},
		},
		{
			name: "a token where its variable's name goes",
			data: "autopilot:\n  source:\n    type: github\n    repo: acme/app\n    token_env: ghp-0123456789abcdefghij\n",
			want: config.Problem{File: "ralph.yml", Line: 5, Msg: "autopilot.source.token_env is not the name of an environment variable (it may be a token)",
				Hint: "name the environment variable that holds the token (token_env: GITHUB_TOKEN) and export the token in it; a token has no place in a config file"},
		},
		{
			name: "credentials in the API's URL",
			data: "autopilot:\n  pr:\n    api_url: https://bot:s3cret@gitlab.acme.test\n",
			want: config.Problem{File: "ralph.yml", Line: 3, Msg: "autopilot.pr.api_url: the URL carries credentials",
				Hint: "put the token in the environment variable token_env names, never in the URL"},
		},
		{
			name: "forge keys on a file source",
			data: "autopilot:\n  source: {type: prd, labels: [ralph]}\n",
			want: config.Problem{File: "ralph.yml", Line: 2, Msg: "autopilot.source: repo, project, team, labels, states, assignee, token_env and api_url are for a github, gitlab or linear source, not prd",
				Hint: "leave them out, or use type: github, gitlab or linear"},
		},
		{
			name: "pull requests with no forge",
			data: "autopilot:\n  source: tk\n  deliver: pr\n",
			want: config.Problem{File: "ralph.yml", Line: 3, Msg: "autopilot.deliver: pr, but nothing says which forge opens the pull requests",
				Hint: "add pr: {forge: github, repo: owner/name} (or gitlab with project:) to autopilot; a github or gitlab source gives its own"},
		},
		{
			name: "pull requests on github with no repository",
			data: "autopilot:\n  source: {type: gitlab, project: acme/app}\n  deliver: pr\n  pr: {forge: github}\n",
			want: config.Problem{File: "ralph.yml", Line: 3, Msg: "autopilot.deliver: pr on github needs the repository (pr.repo)",
				Hint: "add pr: {repo: owner/name} to autopilot"},
		},
		{
			name: "unknown delivery",
			data: "autopilot:\n  deliver: email\n",
			want: config.Problem{File: "ralph.yml", Line: 2, Msg: `autopilot.deliver: unknown value "email"`, Hint: "use one of: merge, push, pr"},
		},
		{
			name: "misspelt cluster key",
			data: "autopilot:\n  cluster:\n    nat: nats://h1:4222\n",
			want: config.Problem{File: "ralph.yml", Line: 3, Msg: `unknown key "nat" in autopilot.cluster; did you mean "nats"?`, Hint: `rename it to "nats", or remove it`},
		},
	})
}
