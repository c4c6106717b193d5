package autopilot

import (
	"cmp"
	"context"
	"slices"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/tasks"
)

// PendingIn counts the ready tasks not yet started in dir, of the source
// the config at configs (ralph.yml when empty) names; -1 when it cannot
// be known.
func PendingIn(ctx context.Context, dir string, configs []string) int {
	cfg, _, err := config.LoadIn(dir, configs, nil, config.Options{})
	if err != nil || slices.Contains(config.ForgeSourceTypes, cfg.Autopilot.Source.Type) {
		// A forge's backlog is not asked for on every status: it costs
		// a request of the rate limit the autopilot needs.
		return -1
	}
	source, err := tasks.Open(TaskSpec(cfg.Autopilot.Source), dir)
	if err != nil {
		return -1
	}
	n, err := CountPending(ctx, dir, source)
	if err != nil {
		return -1
	}
	return n
}

// TaskSpec is the tasks.Spec a config's autopilot.source describes.
func TaskSpec(s config.TaskSource) tasks.Spec {
	return tasks.Spec{Type: s.Type, Path: s.Path, List: s.List, Show: s.Show, Claim: s.Claim, Close: s.Close, Fail: s.Fail, Files: s.Files,
		Repo: s.Repo, Project: s.Project, Team: s.Team, Labels: s.Labels, States: s.States, Assignee: s.Assignee,
		TokenEnv: cmp.Or(s.TokenEnv, config.DefaultTokenEnv(s.Type)), APIURL: s.APIURL}
}

// CountPending counts the source's ready tasks that the autopilot's run in
// repo has not started, for status.
func CountPending(ctx context.Context, repo string, source tasks.Source) (int, error) {
	st, err := runfiles.ReadAutopilotState(repo)
	if err != nil {
		st = runfiles.NewAutopilotState()
	}
	ready, err := source.Ready(ctx)
	if err != nil {
		return -1, err
	}
	n := 0
	for _, t := range ready {
		if st.Ended != nil || !st.Started(t.ID) {
			n++
		}
	}
	return n, nil
}
