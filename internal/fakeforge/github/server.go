// Package github is a fake GitHub for tests: the subset of GitHub's REST
// API that ralph calls (internal/forge/github), served on 127.0.0.1 under
// /api/v3/ as a GitHub Enterprise server is, so go-github reaches it
// through WithEnterpriseURLs (the config's api_url).
//
// # What it serves
//
// Issues of one repository (Options.Repo) and of any other a test adds
// issues to: listing (state, labels, sort, direction, per_page and page,
// with a Link header), one issue, editing its state, title and body,
// assignees (added and removed), comments (listed and added), labels
// added, the issues one is blocked by (GitHub's issue dependencies) and
// its sub-issues, and the token's user (GET /user). As on GitHub, issues
// and pull requests share their numbers, and the issues API lists pull
// requests too, with a pull_request key.
//
// Pull requests of Options.Repo, backed by a real bare git repository
// (Options.Git, the remote the autopilot pushes to): listing (state,
// head as owner:branch, base), opening one (its head and base branches
// must exist there, with commits between them; a second open one from
// the same head onto the same base is refused as GitHub refuses it),
// one pull request, and editing its title, body and state. Its head SHA
// is the head branch's tip in the bare repository as it is now, and
// whether it merges is asked of git (git merge-tree --write-tree): a
// conflict is mergeable: false, mergeable_state "dirty".
//
// Answers are built from GitHub's documented examples, recorded in
// testdata (their sources are in testdata/README.md): each answer is the
// example with the fields the fake keeps overwritten, so the fields it
// does not keep are there as GitHub sends them. Every answer carries
// GitHub's X-RateLimit-* headers, with plenty remaining.
//
// # What a test does to it
//
// AddIssue, Block and AddSubIssue make a backlog; CloseIssue and
// ReopenIssue change an issue as a person would; Issue and Comments read
// one back. MergePR merges a pull request as a person would: a real merge
// commit of its head onto its base in the bare repository, the pull
// request merged with that commit as its merge_commit_sha, and, as on
// GitHub, the issues its body closes with a keyword ("Closes #3",
// "fixes #4") closed; a pull request that conflicts is not merged.
// ClosePR closes one unmerged. PushToBase commits a change to a file on
// a branch of the bare repository as someone else would, to move the
// base under an open pull request (and make it conflict). PR, PRs and
// OpenPR (by head and base) read pull requests back.
//
// The embedded fakeforge.Recorder logs every request (Writes: those that
// would change something), checks the token, and can be told to refuse
// the next requests for a rate limit (RefuseNext, with PrimaryRateLimit
// or SecondaryRateLimit).
package github

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/fakeforge"
)

// Options say what the fake serves.
type Options struct {
	// Repo is the repository's owner/name.
	Repo string
	// Token is the one token it accepts (as "Bearer <token>"); "" any.
	Token string
	// User is the login of the token's user; "ralph-bot" when "".
	User string
	// Collaborators are the logins an issue can be assigned to besides
	// User; GitHub silently leaves out anyone else. None: anyone can be.
	Collaborators []string
	// Git is the bare git repository behind the pull requests; "" has
	// none, and no pull request can be opened.
	Git string
	// DefaultBranch is the repository's default branch, onto which a
	// merged pull request closes the issues its body names; "main" when
	// "".
	DefaultBranch string
}

// Server is a fake GitHub. Its methods may be called from any goroutine.
type Server struct {
	*fakeforge.Recorder
	opts Options
	srv  *httptest.Server
	// api and web are its API's and web pages' roots, as GitHub's
	// https://api.github.com and https://github.com.
	api, web string
	fixtures map[string][]byte

	mu     sync.Mutex
	repos  map[string]*repository // by lower-case owner/name
	ids    int64                  // the last id given to anything
	users  map[string]int64
	labels map[string]int64
}

// New starts a fake GitHub serving o, closed when t ends.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	owner, name, ok := strings.Cut(o.Repo, "/")
	require.True(t, ok && owner != "" && name != "", "fake GitHub: Repo %q is not owner/name", o.Repo)
	if o.User == "" {
		o.User = "ralph-bot"
	}
	if o.DefaultBranch == "" {
		o.DefaultBranch = "main"
	}
	s := &Server{Recorder: &fakeforge.Recorder{Token: o.Token, Scheme: "Bearer"}, opts: o,
		repos: map[string]*repository{}, users: map[string]int64{}, labels: map[string]int64{}}
	s.repo(o.Repo)
	s.srv = httptest.NewUnstartedServer(s.Wrap(s.routes()))
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	s.web = s.srv.URL
	s.api = s.srv.URL + "/api/v3"
	s.fixtures = loadFixtures(s.api, s.web)
	return s
}

// URL is the API's root, as the config's api_url
// (http://127.0.0.1:PORT/api/v3).
func (s *Server) URL() string { return s.api }

// WebURL is the root of the pages the answers' html_url fields point to.
func (s *Server) WebURL() string { return s.web }

// PrimaryRateLimit is GitHub's refusal once the token's primary rate
// limit is spent: 403, X-RateLimit-Remaining 0 and the reset time.
func PrimaryRateLimit(reset time.Time) fakeforge.Refusal {
	return fakeforge.Refusal{Status: http.StatusForbidden,
		Headers: map[string]string{"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
			"X-RateLimit-Reset": strconv.FormatInt(reset.Unix(), 10), "X-RateLimit-Resource": "core"},
		Body: `{"message":"API rate limit exceeded for user ID 1.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`}
}

// SecondaryRateLimit is GitHub's refusal for a secondary rate limit:
// status (403 or 429) with Retry-After in seconds.
func SecondaryRateLimit(status, retryAfter int) fakeforge.Refusal {
	return fakeforge.Refusal{Status: status, Headers: map[string]string{"Retry-After": strconv.Itoa(retryAfter)},
		Body: `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`}
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	const repo = "/api/v3/repos/{owner}/{repo}"
	handle := func(pattern string, h func(w http.ResponseWriter, r *http.Request, rp *repository)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			defer s.mu.Unlock()
			rp := s.repos[strings.ToLower(r.PathValue("owner")+"/"+r.PathValue("repo"))]
			if rp == nil {
				notFound(w)
				return
			}
			h(w, r, rp)
		})
	}
	mux.HandleFunc("GET /api/v3/user", s.me)
	handle("GET "+repo+"/issues", s.listIssues)
	handle("GET "+repo+"/issues/{number}", s.withItem(s.getIssue))
	handle("PATCH "+repo+"/issues/{number}", s.withItem(s.editIssue))
	handle("POST "+repo+"/issues/{number}/assignees", s.withItem(s.addAssignees))
	handle("DELETE "+repo+"/issues/{number}/assignees", s.withItem(s.removeAssignees))
	handle("GET "+repo+"/issues/{number}/comments", s.withItem(s.listComments))
	handle("POST "+repo+"/issues/{number}/comments", s.withItem(s.addComment))
	handle("POST "+repo+"/issues/{number}/labels", s.withItem(s.addLabels))
	handle("GET "+repo+"/issues/{number}/dependencies/blocked_by", s.withItem(s.listBlockers))
	handle("GET "+repo+"/issues/{number}/sub_issues", s.withItem(s.listSubIssues))
	handle("GET "+repo+"/pulls", s.listPulls)
	handle("POST "+repo+"/pulls", s.createPull)
	handle("GET "+repo+"/pulls/{number}", s.withPull(s.getPull))
	handle("PATCH "+repo+"/pulls/{number}", s.withPull(s.editPull))
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { notFound(w) })
	return rateHeaders(mux)
}

// rateHeaders adds the X-RateLimit-* headers GitHub sends with every
// answer, with the limit far from spent.
func rateHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-RateLimit-Limit", "5000")
		h.Set("X-RateLimit-Remaining", "4999")
		h.Set("X-RateLimit-Used", "1")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
		h.Set("X-RateLimit-Resource", "core")
		h.Set("X-GitHub-Media-Type", "github.v3; format=json")
		next.ServeHTTP(w, r)
	})
}

func notFound(w http.ResponseWriter) {
	fakeforge.JSON(w, http.StatusNotFound, map[string]any{"message": "Not Found",
		"documentation_url": "https://docs.github.com/rest", "status": "404"})
}

// invalid is GitHub's 422: what was sent cannot be done, and why.
func invalid(w http.ResponseWriter, message string, errs ...map[string]any) {
	body := map[string]any{"message": message, "documentation_url": "https://docs.github.com/rest", "status": "422"}
	if len(errs) > 0 {
		body["errors"] = errs
	}
	fakeforge.JSON(w, http.StatusUnprocessableEntity, body)
}

// decode reads the request's JSON body into v; a body that is not JSON
// is GitHub's 400.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		fakeforge.JSON(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON",
			"documentation_url": "https://docs.github.com/rest", "status": "400"})
		return false
	}
	return true
}

// page is the slice of items the request's page and per_page ask for,
// with GitHub's Link header for the others.
func page[T any](w http.ResponseWriter, r *http.Request, items []T) []T {
	per, err := strconv.Atoi(r.URL.Query().Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	per = min(per, 100)
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || n <= 0 {
		n = 1
	}
	last := max((len(items)+per-1)/per, 1)
	link := func(p int, rel string) string {
		u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path}
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		u.RawQuery = q.Encode()
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	var links []string
	if n < last {
		links = append(links, link(n+1, "next"), link(last, "last"))
	}
	if n > 1 {
		links = append(links, link(1, "first"), link(min(n-1, last), "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	from := min((n-1)*per, len(items))
	return items[from:min(from+per, len(items))]
}
