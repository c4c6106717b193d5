package git

import (
	"context"
	"errors"
	"strconv"
	"strings"
)

// Branches lists the branches whose names start with prefix ("ralph-loop/"),
// sorted by name.
func (g Repo) Branches(ctx context.Context, prefix string) ([]string, error) {
	out, err := g.run(ctx, "for-each-ref", "--format=%(refname)", "--sort=refname", "refs/heads/"+prefix)
	if err != nil {
		return nil, err
	}
	var names []string
	for line := range strings.Lines(string(out)) {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "refs/heads/"); ok && strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	return names, nil
}

// CountCommits counts the commits reachable from rev that base does not
// reach: how far rev is ahead of base; 0 when rev is merged into it.
func (g Repo) CountCommits(ctx context.Context, base, rev string) (int, error) {
	out, err := g.run(ctx, "rev-list", "--count", rev, "^"+base, "--")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// SetBranchConfig sets branch.<branch>.<key> in the repository's config,
// which git drops with the branch when it deletes it.
func (g Repo) SetBranchConfig(ctx context.Context, branch, key, value string) error {
	_, err := g.run(ctx, "config", "branch."+branch+"."+key, value)
	return err
}

// BranchConfig is branch.<branch>.<key> of the repository's config; "" when
// it is not set.
func (g Repo) BranchConfig(ctx context.Context, branch, key string) (string, error) {
	out, err := g.run(ctx, "config", "--get", "branch."+branch+"."+key)
	var ge *gitError
	if errors.As(err, &ge) && ge.exitCode == 1 {
		return "", nil
	}
	return strings.TrimSpace(string(out)), err
}
