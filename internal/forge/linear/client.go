// Package linear is a Linear team's issues as ralph uses them: a
// forge.Tracker over a small typed client of Linear's GraphQL API. There
// is no GraphQL library: each query and mutation is a Go constant with a
// struct for its variables and one for its data (operations.go), and one
// function, do, sends any of them.
//
// Linear has no pull requests: a linear source that delivers pull
// requests opens them on GitHub or GitLab.
package linear

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/internal/hint"
)

// APIURL is Linear's GraphQL endpoint.
const APIURL = "https://api.linear.app/graphql"

// Options say which team, which of its issues, where and as whom.
type Options struct {
	// Team is the team's key: the prefix of its issues' identifiers
	// (ENG in ENG-12).
	Team string
	// Labels select the issues Open lists: those with every one.
	Labels []string
	// States are the names of the workflow states Open lists issues in;
	// none: the team's states of type "unstarted" (Todo), not its
	// backlog, which Linear keeps for what is not planned yet.
	States []string
	// Assignee is whom ralph works as, besides the token's user: an
	// email, display name or name of the workspace's users, resolved to
	// the user's id once, when first needed. "": the token's user.
	Assignee string
	// APIURL is the GraphQL endpoint; "" is Linear's. A URL without a
	// path has /graphql added.
	APIURL string
	// Token is a personal API key, sent as the Authorization header as
	// it is (Linear's OAuth tokens would be sent with "Bearer ").
	Token string
	// Wait is told before a rate limit's wait.
	Wait forge.Waiter
	// Transport sends the requests; http.DefaultTransport when nil.
	Transport http.RoundTripper
}

// Client is one team's issues on Linear. It is safe for concurrent use.
type Client struct {
	http     *http.Client
	endpoint string
	token    string
	opts     Options
	// pageSize is how many issues one request lists; small in tests.
	pageSize int

	mu   sync.Mutex
	team *team
	me   string
	// uuids are the ids of the issues seen, by identifier: mutations
	// name an issue by its id.
	uuids map[string]string
}

// New is the client of the team o names.
func New(o Options) (*Client, error) {
	if strings.TrimSpace(o.Team) == "" {
		return nil, &hint.Error{Err: errors.New("linear: no team"),
			Fix: "name the team by its key, the prefix of its issues' identifiers: source: {type: linear, team: ENG}"}
	}
	endpoint, err := endpointOf(o.APIURL)
	if err != nil {
		return nil, err
	}
	return &Client{
		// No client time-out: the transport's rate-limit waits run
		// inside a request; the context ends a request that hangs.
		http:     &http.Client{Transport: &forge.RateLimited{Next: o.Transport, Wait: o.Wait}},
		endpoint: endpoint, token: o.Token, opts: o, pageSize: 25, uuids: map[string]string{},
	}, nil
}

// endpointOf is the GraphQL endpoint api_url names.
func endpointOf(apiURL string) (string, error) {
	if apiURL == "" {
		return APIURL, nil
	}
	u, err := url.Parse(apiURL)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", &hint.Error{Err: fmt.Errorf("linear: api_url %q is not an http or https URL", apiURL),
			Fix: "leave api_url out for Linear's own API (" + APIURL + ")"}
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/graphql"
	}
	return u.String(), nil
}

// request is the body of a GraphQL request.
type request struct {
	Query         string `json:"query"`
	OperationName string `json:"operationName"`
	Variables     any    `json:"variables,omitempty"`
}

// response is the body of a GraphQL answer; Data is decoded into the
// operation's own struct.
type response struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

// gqlError is one GraphQL error, with the extensions Linear adds.
type gqlError struct {
	Message    string `json:"message"`
	Path       []any  `json:"path"`
	Extensions struct {
		Code                   string `json:"code"`
		Type                   string `json:"type"`
		UserPresentableMessage string `json:"userPresentableMessage"`
	} `json:"extensions"`
}

// maxBody bounds what is read of an answer: a page of issues is tens of
// kilobytes.
const maxBody = 16 << 20

// do sends one operation, query, with vars, and decodes its data into
// out. An answer with errors is an error: ErrNotFound wrapped for an
// entity Linear has not, a *forge.RateLimitError for a rate limit the
// transport did not wait out, the key's refusal with how to fix it.
func (c *Client) do(ctx context.Context, query string, vars, out any) error {
	name := operationName(query)
	body, err := json.Marshal(request{Query: query, OperationName: name, Variables: vars})
	if err != nil {
		return fmt.Errorf("linear: %s: %w", name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("linear: %s: %w", name, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("linear: %s: %w", name, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("linear: %s: read the answer: %w", name, err)
	}
	var r response
	if jsonErr := json.Unmarshal(data, &r); jsonErr != nil || resp.StatusCode != http.StatusOK && len(r.Errors) == 0 {
		return statusError(name, resp, data)
	}
	if len(r.Errors) > 0 {
		return graphQLError(name, resp, r.Errors)
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		return fmt.Errorf("linear: %s: decode the answer: %w", name, err)
	}
	return nil
}

// operationName is the name after "query" or "mutation" in query.
func operationName(query string) string {
	f := strings.FieldsFunc(query, func(r rune) bool { return r == ' ' || r == '(' || r == '{' || r == '\n' })
	if len(f) > 1 {
		return f[1]
	}
	return "request"
}

// statusError is an answer that is no GraphQL answer.
func statusError(name string, resp *http.Response, body []byte) error {
	err := fmt.Errorf("linear: %s: %s answered %s: %.200s", name, resp.Request.URL.Redacted(), resp.Status, bytes.TrimSpace(body))
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return keyRefused(err)
	}
	return err
}

func keyRefused(err error) error {
	return &hint.Error{Err: err, Fix: "check the API key in the variable token_env names (LINEAR_API_KEY unless set): " +
		"a personal API key made under Settings → Security & access, with read and write access to the team's issues"}
}

// graphQLError is the error of an answer with GraphQL errors.
func graphQLError(name string, resp *http.Response, errs []gqlError) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = cmp.Or(e.Extensions.UserPresentableMessage, e.Message)
	}
	err := fmt.Errorf("linear: %s: %s", name, strings.Join(msgs, "; "))
	for _, e := range errs {
		switch {
		case e.Extensions.Code == "RATELIMITED":
			return &forge.RateLimitError{Service: "linear", Reset: reset(resp.Header), Why: strings.Join(msgs, "; ")}
		case e.Extensions.Code == "AUTHENTICATION_ERROR" || e.Extensions.Type == "authentication error":
			return keyRefused(err)
		case strings.HasPrefix(e.Message, "Entity not found"):
			return fmt.Errorf("%w (%w)", err, forge.ErrNotFound)
		}
	}
	return err
}

// reset is when the limit that refused a request resets; zero when the
// answer does not say.
func reset(h http.Header) time.Time {
	at, _ := forge.ResetAt(h)
	return at
}
