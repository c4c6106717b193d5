package tasks

import (
	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/forge/gitlab"
)

// openGitLab is the issues of a GitLab project (spec.Project, on
// spec.APIURL or gitlab.com) with every label of spec.Labels, as a forge
// source: the token comes from the variable spec.TokenEnv names.
func openGitLab(spec Spec) (Source, error) {
	token, err := forge.Token("gitlab", spec.TokenEnv)
	if err != nil {
		return nil, err
	}
	client, err := gitlab.New(gitlab.Options{Project: spec.Project, APIURL: spec.APIURL, Token: token,
		Labels: spec.Labels, Wait: spec.Wait})
	if err != nil {
		return nil, err
	}
	return NewForgeSource("gitlab", client, spec.Assignee), nil
}
