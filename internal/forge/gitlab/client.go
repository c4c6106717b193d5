// Package gitlab is a GitLab project as ralph uses it, through GitLab's
// own Go client: its issues as a forge.Tracker (Client) and its merge
// requests as forge.PullRequests (Client.Pulls), on gitlab.com or a
// self-hosted GitLab. Every request goes through forge.RateLimited, which
// waits out GitLab's 429 and says so; the client's own retries are off.
//
// An issue's id is its iid ("12"); a pull request's Number is a merge
// request's iid. internal/fakeforge/gitlab serves what this package asks
// of GitLab, for tests.
package gitlab

import (
	"fmt"
	"net/http"
	"sync"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/ralph-loop/ralph/internal/forge"
)

// Options say which project, where and as whom.
type Options struct {
	// Project is group/name (or subgroups: group/sub/name) or the
	// project's numeric id.
	Project string
	// APIURL is a self-hosted GitLab (https://gitlab.example.com); ""
	// is gitlab.com.
	APIURL string
	// Token authenticates every request (a personal, project or group
	// access token).
	Token string
	// Labels select the issues Open lists: those with every one.
	Labels []string
	// Wait is told before a rate limit's wait.
	Wait forge.Waiter
	// Transport sends the requests; http.DefaultTransport when nil.
	Transport http.RoundTripper
}

// Client is one project on GitLab: its issues as a forge.Tracker, and its
// merge requests as forge.PullRequests (Pulls).
type Client struct {
	gl      *gl.Client
	project string
	labels  []string

	mu sync.Mutex
	// userIDs are the ids of the users ralph assigns, by username, asked
	// of GitLab once: assignee_ids takes ids, the config names people.
	userIDs map[string]int64
}

// New is the client of the project o names.
func New(o Options) (*Client, error) {
	if o.Project == "" {
		return nil, fmt.Errorf("gitlab: no project")
	}
	opts := []gl.ClientOptionFunc{
		gl.WithHTTPClient(&http.Client{Transport: &forge.RateLimited{Next: o.Transport, Wait: o.Wait}}),
		// forge.RateLimited waits out rate limits, saying so; the
		// client's own retries would wait again, silently.
		gl.WithoutRetries(),
	}
	if o.APIURL != "" {
		opts = append(opts, gl.WithBaseURL(o.APIURL))
	}
	client, err := gl.NewClient(o.Token, opts...)
	if err != nil {
		return nil, fmt.Errorf("gitlab: %w", err)
	}
	return &Client{gl: client, project: o.Project, labels: o.Labels, userIDs: map[string]int64{}}, nil
}
