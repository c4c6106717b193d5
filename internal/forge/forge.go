// Package forge owns what ralph asks of the services a team keeps its
// code and backlog on (GitHub, GitLab, Linear): the issues of a tracker
// (Tracker) and the pull requests a finished task is delivered as
// (PullRequests), in the few terms ralph needs, one sub-package per
// service. It also owns what every service's client shares: the token,
// read from an environment variable the config names and never from a
// file, and the waits a service's rate limit asks for (RateLimited).
//
// The sub-packages speak to the real APIs through well-kept clients
// (go-github, GitLab's own client) or a small typed GraphQL client
// (Linear); internal/fakeforge serves the subset they call, for tests.
package forge

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/hint"
)

// Issue is one issue of a tracker, as ralph needs it.
type Issue struct {
	// ID names the issue in its tracker: its number on GitHub, its iid
	// on GitLab ("42"), its identifier on Linear ("ENG-12").
	ID    string
	Title string
	Body  string
	URL   string
	// Open is false once the tracker counts the issue done (closed,
	// or in a completed or canceled state on Linear).
	Open bool
	// Labels are the issue's labels, as written.
	Labels []string
	// Assignees are the logins (GitHub, GitLab) or ids (Linear) of the
	// people the issue is assigned to.
	Assignees []string
	// Priority is the tracker's own priority, 0 the highest; -1 when the
	// tracker has none or the issue has none (ralph then reads P0…P3
	// labels).
	Priority int
	// BlockedBy are the ids of the open issues this one waits for.
	BlockedBy []string
}

// Tracker is the backlog of one repository, project or team. Every
// method that changes the tracker is idempotent: assigning an assignee,
// closing a closed issue and the like succeed and change nothing.
type Tracker interface {
	// Open lists the open issues the config selects (labels, states),
	// with their blockers.
	Open(ctx context.Context) ([]Issue, error)
	// Issue returns one issue, open or not; an error wrapping ErrNotFound
	// when there is none.
	Issue(ctx context.Context, id string) (Issue, error)
	// Me is the login (or id) of the token's user, who ralph assigns
	// the issues it works on to.
	Me(ctx context.Context) (string, error)
	Assign(ctx context.Context, id, user string) error
	Unassign(ctx context.Context, id, user string) error
	Comment(ctx context.Context, id, body string) error
	Close(ctx context.Context, id string) error
	Reopen(ctx context.Context, id string) error
}

// ErrNotFound is wrapped by the errors of a service that has no such
// issue or pull request.
var ErrNotFound = fmt.Errorf("not found")

// Change is a pull request (a merge request on GitLab) to open: Head's
// commits onto Base.
type Change struct {
	Head, Base  string
	Title, Body string
	Labels      []string
}

// PullRequest states.
const (
	StateOpen   = "open"
	StateMerged = "merged"
	StateClosed = "closed" // closed without being merged
)

// PullRequest is one pull request as ralph follows it.
type PullRequest struct {
	// Number is the pull request's number (a merge request's iid).
	Number int
	URL    string
	// State is StateOpen, StateMerged or StateClosed.
	State string
	// Conflicts is true when the service says the head no longer merges
	// cleanly onto the base; false also while it has not computed it.
	Conflicts bool
	Head      string
	Base      string
	// HeadSHA is the commit the head branch was at.
	HeadSHA string
	// MergeCommit is the commit a merged pull request became on the base.
	MergeCommit string
}

// PullRequests are the pull requests of one repository.
type PullRequests interface {
	// Open opens change, or returns the open pull request from its head
	// onto its base when there is one already, so a restart between the
	// request and its record opens no second one.
	Open(ctx context.Context, change Change) (PullRequest, error)
	// Get returns one pull request; an error wrapping ErrNotFound when
	// there is none.
	Get(ctx context.Context, number int) (PullRequest, error)
}

// Token reads the API token from the environment variable env names. The
// error says which variable is missing and how to set it, never a value.
func Token(service, env string) (string, error) {
	if env == "" {
		return "", &hint.Error{Err: fmt.Errorf("%s: no token_env names the environment variable that holds the API token", service),
			Fix: "add token_env: " + defaultTokenEnv(service) + " to the source and export that variable; tokens are never read from config files"}
	}
	token := strings.TrimSpace(os.Getenv(env))
	if token == "" {
		return "", &hint.Error{Err: fmt.Errorf("%s: $%s is not set, and it holds the API token", service, env),
			Fix: "export " + env + "=… (a token that can read and write issues" + pullsToo(service) + ") before running ralph"}
	}
	return token, nil
}

func defaultTokenEnv(service string) string {
	switch service {
	case "gitlab":
		return "GITLAB_TOKEN"
	case "linear":
		return "LINEAR_API_KEY"
	}
	return "GITHUB_TOKEN"
}

func pullsToo(service string) string {
	if service == "linear" {
		return ""
	}
	return " and pull requests"
}

// Waiter is told before each wait a rate limit asks for: how long, and
// the service's own words for why. A nil Waiter is told nothing.
type Waiter func(wait time.Duration, why string)
