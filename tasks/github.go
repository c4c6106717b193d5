package tasks

import (
	"errors"

	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/forge/github"
)

// openGitHub is a GitHub repository's issues as a source: those with
// every label of spec.Labels, the token read from spec.TokenEnv, on
// spec.APIURL's server (GitHub Enterprise) or github.com's.
func openGitHub(spec Spec) (Source, error) {
	if spec.Repo == "" {
		return nil, errors.New("autopilot.source github: repo is required: the repository whose issues are the tasks, as owner/name (repo: ralph-loop/ralph)")
	}
	token, err := forge.Token("github", spec.TokenEnv)
	if err != nil {
		return nil, err
	}
	client, err := github.New(github.Options{Repo: spec.Repo, APIURL: spec.APIURL, Token: token, Labels: spec.Labels, Wait: spec.Wait})
	if err != nil {
		return nil, err
	}
	return NewForgeSource("github", client, spec.Assignee), nil
}
