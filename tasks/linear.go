package tasks

import (
	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/forge/linear"
)

// openLinear is a Linear team's issues as tasks (see forgeSource): the
// team's issues in the states spec names (its unstarted ones, Todo, by
// default) with every label, their ids their identifiers (ENG-12). The
// API key is read from the variable spec.TokenEnv names; whom ralph
// works as (spec.Assignee, an email or a name, else the key's user) is
// resolved to the user's id by the client, which is why the source is
// given no user of its own.
func openLinear(spec Spec) (Source, error) {
	token, err := forge.Token("linear", spec.TokenEnv)
	if err != nil {
		return nil, err
	}
	client, err := linear.New(linear.Options{Team: spec.Team, Labels: spec.Labels, States: spec.States,
		Assignee: spec.Assignee, APIURL: spec.APIURL, Token: token, Wait: spec.Wait})
	if err != nil {
		return nil, err
	}
	return NewForgeSource("linear", client, ""), nil
}
