// Package gitlab is a fake GitLab for tests: the part of GitLab's REST API
// (v4) that internal/forge/gitlab calls, on 127.0.0.1, with one project.
//
// It serves, under /api/v4/, the token's user (GET /user), users by name
// (GET /users?username=), the project's issues (list with state, labels,
// order_by, sort and pagination; get; update: assignee_ids, assignee_id,
// state_event, labels, add_labels, remove_labels, title, description),
// their notes (create, list) and links (list), and its merge requests
// (list with state, source_branch and target_branch; create; get). The
// project is addressed by its URL-encoded path (group%2Fname) or its id,
// and the token is checked in the PRIVATE-TOKEN header, as GitLab's Go
// client sends it.
//
// Every answer is built from the recorded example in testdata (its source
// named in testdata/README.md), the fields the fake keeps overwritten. With
// Options.Premium, issues carry `weight` and may block one another (links
// of type blocks and is_blocked_by), as on GitLab Premium; without it they
// are GitLab Free's, which has neither.
//
// Merge requests act on a real bare git repository (Options.Repo, the
// remote the code under test pushes to): a merge request's source branch
// must exist there, its sha is the branch's head, and has_conflicts is
// computed with git merge-tree. A test plays the people and the rest of
// GitLab: it adds users and issues, makes one issue block another, merges
// a merge request (MergeMR: a real merge commit on the target branch, and,
// as GitLab does on the default branch, the issues its description closes
// with "Closes #N" closed) or closes it unmerged (CloseMR), commits to a
// branch as someone else would (CommitToBranch, to make a merge request
// conflict), reads what ralph wrote (Issue, Notes, MR), and through the
// embedded fakeforge.Recorder reads the request log and makes the next
// requests meet the rate limit (RefuseNext with RateLimited).
package gitlab

import (
	"embed"
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

	"github.com/ralph-loop/ralph/internal/fakeforge"
)

// Options say what the fake serves.
type Options struct {
	// Project is the project's path; default "group/project".
	Project string
	// ProjectID is its numeric id; default 4.
	ProjectID int64
	// Token is the one token accepted; "" accepts any.
	Token string
	// User is the username of the token's user; default "ralph-bot".
	User string
	// Premium serves GitLab Premium's issues: with weight, and blocking
	// links.
	Premium bool
	// Repo is the bare git repository merge requests act on; "" refuses
	// every merge request.
	Repo string
}

// Server is a fake GitLab.
type Server struct {
	*fakeforge.Recorder
	// URL is where it listens, the api_url to give a client (which
	// appends /api/v4/).
	URL string

	t     testing.TB
	o     Options
	mu    sync.Mutex
	users []user
	// issues, links and mrs in the order they were made; an issue's iid
	// is its index plus one, a merge request's too.
	issues []*issue
	links  []link
	mrs    []*mergeRequest
	// lastID is the last global id given (issues, notes, links, merge
	// requests share GitLab's id space here).
	lastID int64
	// created is when the next issue or merge request was made: a minute
	// after the last, so that ordering by creation is the order of making.
	created time.Time
}

// Start starts a fake GitLab for the test's lifetime.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	if o.Project == "" {
		o.Project = "group/project"
	}
	if o.ProjectID == 0 {
		o.ProjectID = 4
	}
	if o.User == "" {
		o.User = "ralph-bot"
	}
	s := &Server{Recorder: &fakeforge.Recorder{}, t: t, o: o,
		created: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)}
	s.users = []user{{id: 1, username: "maintainer", name: "Project Maintainer"}, {id: 2, username: o.User, name: "Ralph"}}
	srv := httptest.NewServer(s.Wrap(http.HandlerFunc(s.serve)))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// route is a request's method and its path below the project, numbers
// replaced by ":n" ("GET issues/:n/links"), and the numbers.
type route struct {
	key  string
	nums []int64
}

func routeOf(method string, parts []string) route {
	r := route{key: method}
	for i, p := range parts {
		sep := " "
		if i > 0 {
			sep = "/"
		}
		if n, err := strconv.ParseInt(p, 10, 64); err == nil {
			r.nums = append(r.nums, n)
			p = ":n"
		}
		r.key += sep + p
	}
	return r
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if s.o.Token != "" && r.Header.Get("PRIVATE-TOKEN") != s.o.Token {
		fakeforge.JSON(w, http.StatusUnauthorized, map[string]any{"message": "401 Unauthorized"})
		return
	}
	path, ok := strings.CutPrefix(r.URL.EscapedPath(), "/api/v4/")
	if !ok {
		notFound(w, "404 Not Found")
		return
	}
	parts := strings.Split(strings.TrimSuffix(path, "/"), "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && path == "user":
		fakeforge.JSON(w, http.StatusOK, s.currentUserJSON())
	case r.Method == http.MethodGet && path == "users":
		fakeforge.JSON(w, http.StatusOK, s.usersNamed(r.URL.Query().Get("username")))
	case parts[0] == "projects" && len(parts) >= 3:
		if !s.isProject(parts[1]) {
			notFound(w, "404 Project Not Found")
			return
		}
		s.serveProject(w, r, routeOf(r.Method, parts[2:]))
	default:
		notFound(w, "404 Not Found")
	}
}

// isProject reports whether id names the project: its URL-encoded path
// or its number.
func (s *Server) isProject(id string) bool {
	path, err := url.PathUnescape(id)
	return err == nil && (path == s.o.Project || path == strconv.FormatInt(s.o.ProjectID, 10))
}

func (s *Server) serveProject(w http.ResponseWriter, r *http.Request, rt route) {
	switch rt.key {
	case "GET issues":
		s.listIssues(w, r)
	case "GET issues/:n":
		s.withIssue(w, rt, func(is *issue) { fakeforge.JSON(w, http.StatusOK, s.issueJSON(is, s.fixture("issue.json"))) })
	case "PUT issues/:n":
		s.withIssue(w, rt, func(is *issue) { s.updateIssue(w, r, is) })
	case "GET issues/:n/notes":
		s.withIssue(w, rt, func(is *issue) { s.listNotes(w, r, is) })
	case "POST issues/:n/notes":
		s.withIssue(w, rt, func(is *issue) { s.createNote(w, r, is) })
	case "GET issues/:n/links":
		s.withIssue(w, rt, func(is *issue) { fakeforge.JSON(w, http.StatusOK, s.linksJSON(is)) })
	case "GET merge_requests":
		s.listMRs(w, r)
	case "POST merge_requests":
		s.createMR(w, r)
	case "GET merge_requests/:n":
		s.withMR(w, rt, func(mr *mergeRequest) {
			fakeforge.JSON(w, http.StatusOK, s.mrJSON(mr, s.fixture("merge_request.json")))
		})
	default:
		notFound(w, "404 Not Found")
	}
}

func notFound(w http.ResponseWriter, message string) {
	fakeforge.JSON(w, http.StatusNotFound, map[string]any{"message": message})
}

// badRequest is GitLab's answer to a parameter missing or wrong (Grape's
// validation error).
func badRequest(w http.ResponseWriter, message string) {
	fakeforge.JSON(w, http.StatusBadRequest, map[string]any{"error": message})
}

// RateLimited is GitLab's refusal of a request over its rate limit, with
// GitLab's headers: Retry-After in seconds and the reset time both ways.
func RateLimited(retryAfter int) fakeforge.Refusal {
	reset := time.Now().Add(time.Duration(retryAfter) * time.Second)
	return fakeforge.Refusal{Status: http.StatusTooManyRequests, Body: "Retry later\n", Headers: map[string]string{
		"RateLimit-Name":      "throttle_authenticated_api",
		"RateLimit-Limit":     "60",
		"RateLimit-Observed":  "61",
		"RateLimit-Remaining": "0",
		"RateLimit-Reset":     strconv.FormatInt(reset.Unix(), 10),
		"RateLimit-ResetTime": reset.UTC().Format(http.TimeFormat),
		"Retry-After":         strconv.Itoa(retryAfter),
	}}
}

//go:embed testdata/*.json
var fixtures embed.FS

// recordings are the recorded answers, decoded once.
var recordings = sync.OnceValue(func() map[string]any {
	out := map[string]any{}
	entries, err := fixtures.ReadDir("testdata")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		data, err := fixtures.ReadFile("testdata/" + e.Name())
		if err != nil {
			panic(err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			panic(fmt.Sprintf("testdata/%s: %v", e.Name(), err))
		}
		out[e.Name()] = v
	}
	return out
})

// fixture is a copy of a recorded answer: the object, or the first
// object of a list.
func (s *Server) fixture(name string) map[string]any {
	v := recordings()[name]
	if list, ok := v.([]any); ok {
		v = list[0]
	}
	return deepCopy(v).(map[string]any)
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// timeJSON is a time as GitLab writes it: UTC with milliseconds.
func timeJSON(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// orNil is t as JSON, null when t is nil.
func orNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return timeJSON(*t)
}

// nextID is a new global id.
func (s *Server) nextID() int64 {
	s.lastID++
	return s.lastID
}

// nextCreated is when the next thing made was made.
func (s *Server) nextCreated() time.Time {
	s.created = s.created.Add(time.Minute)
	return s.created
}

// webURL is a page of the project on GitLab's web side.
func (s *Server) webURL(format string, args ...any) string {
	return s.URL + "/" + s.o.Project + "/-/" + fmt.Sprintf(format, args...)
}

// paginate writes GitLab's pagination headers for items and returns the
// page the request asks for (page, per_page: 20 by default, 100 at most).
func paginate[T any](w http.ResponseWriter, r *http.Request, items []T) []T {
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 20
	}
	per = min(per, 100)
	pages := max((len(items)+per-1)/per, 1)
	h := w.Header()
	h.Set("X-Page", strconv.Itoa(page))
	h.Set("X-Per-Page", strconv.Itoa(per))
	h.Set("X-Total", strconv.Itoa(len(items)))
	h.Set("X-Total-Pages", strconv.Itoa(pages))
	h.Set("X-Next-Page", "")
	h.Set("X-Prev-Page", "")
	link := func(rel string, p int) string {
		u := *r.URL
		v := u.Query()
		v.Set("page", strconv.Itoa(p))
		u.RawQuery = v.Encode()
		return fmt.Sprintf(`<http://%s%s>; rel="%s"`, r.Host, u.RequestURI(), rel)
	}
	links := []string{}
	if page > 1 {
		h.Set("X-Prev-Page", strconv.Itoa(page-1))
		links = append(links, link("prev", page-1))
	}
	if page < pages {
		h.Set("X-Next-Page", strconv.Itoa(page+1))
		links = append(links, link("next", page+1))
	}
	links = append(links, link("first", 1), link("last", pages))
	h.Set("Link", strings.Join(links, ", "))
	start := min((page-1)*per, len(items))
	return items[start:min(start+per, len(items))]
}

// params are a request's parameters: its JSON body's, else its form's,
// and its query's. GitLab reads them from any of these.
type params map[string]any

func paramsOf(r *http.Request) (params, error) {
	p := params{}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			return nil, fmt.Errorf("the body is not JSON: %w", err)
		}
	} else if err := r.ParseForm(); err == nil {
		for k, v := range r.PostForm {
			p[k] = strings.Join(v, ",")
		}
	}
	for k, v := range r.URL.Query() {
		if _, ok := p[k]; !ok {
			p[k] = strings.Join(v, ",")
		}
	}
	return p, nil
}

// str is a string parameter, and whether it was given.
func (p params) str(name string) (string, bool) {
	v, ok := p[name]
	if !ok || v == nil {
		return "", ok
	}
	if s, isString := v.(string); isString {
		return s, true
	}
	return fmt.Sprint(v), true
}

// list is a comma-separated parameter (labels), or a JSON list.
func (p params) list(name string) ([]string, bool) {
	v, ok := p[name]
	if !ok {
		return nil, false
	}
	var out []string
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			out = append(out, fmt.Sprint(e))
		}
	case string:
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				out = append(out, e)
			}
		}
	}
	return out, true
}

// ids is a list of ids (assignee_ids), from JSON numbers or a query's
// assignee_ids[]; 0 stands for none.
func (p params) ids(name string) ([]int64, bool) {
	values, ok := p.list(name)
	if !ok {
		values, ok = p.list(name + "[]")
	}
	var out []int64
	for _, v := range values {
		if n, err := strconv.ParseFloat(v, 64); err == nil && n > 0 {
			out = append(out, int64(n))
		}
	}
	return out, ok
}
