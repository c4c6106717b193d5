// Package linear is a fake of Linear's GraphQL API for tests: the
// operations internal/forge/linear sends (Viewer, Users, Team, Issues,
// Issue, IssueUpdate, CommentCreate), served on 127.0.0.1 from teams,
// users, issues and relations a test adds, each answer built from the
// shape of the examples in testdata (see its README) with the fields the
// fake manages overwritten, and cut to the fields the query selects. A
// query for a field the fixtures' types have not, a filter the fake does
// not understand, or an operation it does not serve is answered with a
// GraphQL error, as Linear answers what it cannot.
//
// The fake keeps Linear's quirks that a client must handle: personal API
// keys are sent bare in Authorization; errors come back as a GraphQL
// errors array with a 400; a request over the rate limit is a 400 whose
// error says RATELIMITED (RateLimitNext); pages of issues come newest
// first, so a client that needs an order must make it.
package linear

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ralph-loop/ralph/internal/fakeforge"
)

//go:embed testdata/*.json
var testdata embed.FS

// Fake is a Linear workspace behind a GraphQL endpoint.
type Fake struct {
	// Recorder logs every request (a mutation is a write) and gives the
	// rate limit's refusals; the fake checks the key itself, to answer
	// as Linear does.
	*fakeforge.Recorder
	// URL is the GraphQL endpoint, http://127.0.0.1:…/graphql.
	URL string
	// Key is the one API key the fake accepts.
	Key string

	fx  fixtures
	srv *httptest.Server

	mu       sync.Mutex
	viewer   *user
	users    []*user
	teams    []*team
	issues   []*issue
	labels   map[string]*label
	blocks   []relation
	comments []*comment
	seq      int
	syncID   int
	clock    time.Time
}

type user struct {
	id, name, displayName, email string
}

type team struct {
	id, key, name string
	states        []*state
	next          int // the next issue's number
}

type state struct {
	id, name, typ string
	position      float64
}

type label struct{ id, name string }

type issue struct {
	id, identifier string
	number         int
	team           *team
	title, body    string
	priority       int
	state          *state
	assignee       *user
	labels         []*label
	created        time.Time
	updated        time.Time
	started        *time.Time
	completed      *time.Time
	canceled       *time.Time
}

// relation is one issue blocking another.
type relation struct {
	id              string
	blocker, waiter *issue
	created         time.Time
}

type comment struct {
	id      string
	issue   *issue
	body    string
	user    *user
	created time.Time
}

// New starts a fake workspace whose API key is key, with one user, the
// key's (Viewer); it stops when t ends.
func New(t testing.TB, key string) *Fake {
	t.Helper()
	f := &Fake{Recorder: &fakeforge.Recorder{}, Key: key, labels: map[string]*label{},
		clock: time.Date(2024, 6, 1, 9, 0, 0, 0, time.UTC)}
	if err := f.fx.load(); err != nil {
		t.Fatalf("fakeforge/linear: %v", err)
	}
	f.viewer = f.addUser("Ralph Bot", "ralph", "ralph@example.com")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /graphql", f.serve)
	f.srv = httptest.NewServer(f.Wrap(mux))
	t.Cleanup(f.srv.Close)
	f.URL = f.srv.URL + "/graphql"
	return f
}

// Viewer is the id of the API key's user.
func (f *Fake) Viewer() string { return f.viewer.id }

// AddUser adds a user to the workspace and returns its id.
func (f *Fake) AddUser(name, displayName, email string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addUser(name, displayName, email).id
}

func (f *Fake) addUser(name, displayName, email string) *user {
	u := &user{id: f.newID(), name: name, displayName: displayName, email: email}
	f.users = append(f.users, u)
	return u
}

// DefaultStates are the workflow states a team is made with, as in
// testdata/teams.json: name and type, in order.
var DefaultStates = [][2]string{{"Backlog", "backlog"}, {"Todo", "unstarted"}, {"In Progress", "started"},
	{"Done", "completed"}, {"Canceled", "canceled"}}

// AddTeam adds a team with the key (ENG) and DefaultStates.
func (f *Fake) AddTeam(key, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &team{id: f.newID(), key: key, name: name, next: 1}
	f.teams = append(f.teams, t)
	for _, s := range DefaultStates {
		f.addState(t, s[0], s[1])
	}
}

// AddState adds a workflow state of type typ (triage, backlog,
// unstarted, started, completed, canceled) to the team, after its
// others.
func (f *Fake) AddState(teamKey, name, typ string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addState(f.team(teamKey), name, typ)
}

func (f *Fake) addState(t *team, name, typ string) {
	t.states = append(t.states, &state{id: f.newID(), name: name, typ: typ, position: float64(len(t.states))})
}

// Issue is what a test says of an issue it adds.
type Issue struct {
	Title, Description string
	// Priority is Linear's: 0 none, 1 urgent, 2 high, 3 medium, 4 low.
	Priority int
	// Labels are made in the workspace as needed.
	Labels []string
	// State is a state's name; "" is the team's first unstarted one.
	State string
	// Assignee is a user's id; "" none.
	Assignee string
}

// AddIssue adds an issue to the team and returns its identifier (ENG-1,
// ENG-2, … in the order they are added, each created a minute after the
// last).
func (f *Fake) AddIssue(teamKey string, is Issue) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.team(teamKey)
	n := &issue{id: f.newID(), number: t.next, team: t, title: is.Title, body: is.Description, priority: is.Priority,
		created: f.tick()}
	n.identifier = fmt.Sprintf("%s-%d", t.key, n.number)
	n.updated = n.created
	t.next++
	n.state = f.firstOfType(t, "unstarted")
	if is.State != "" {
		n.state = f.stateNamed(t, is.State)
	}
	f.markStateTimes(n)
	if is.Assignee != "" {
		n.assignee = f.userByID(is.Assignee)
	}
	for _, name := range is.Labels {
		l, ok := f.labels[strings.ToLower(name)]
		if !ok {
			l = &label{id: f.newID(), name: name}
			f.labels[strings.ToLower(name)] = l
		}
		n.labels = append(n.labels, l)
	}
	f.issues = append(f.issues, n)
	return n.identifier
}

// Block records that blocker blocks waiter (a relation of type blocks
// from blocker to waiter), both identifiers.
func (f *Fake) Block(blocker, waiter string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blocks = append(f.blocks, relation{id: f.newID(), blocker: f.mustFind(blocker), waiter: f.mustFind(waiter), created: f.tick()})
}

// SetState moves an issue to the state named, as a person would.
func (f *Fake) SetState(identifier, stateName string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.mustFind(identifier)
	n.state = f.stateNamed(n.team, stateName)
	n.updated = f.tick()
	f.markStateTimes(n)
}

// IssueState is an issue as a test checks it.
type IssueState struct {
	Identifier, Title string
	// State is the state's name, StateType its type.
	State, StateType string
	// Assignee is the assignee's id, "" none.
	Assignee string
	Labels   []string
}

// Issue is the issue whose identifier is given, as it is now.
func (f *Fake) Issue(identifier string) IssueState {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.mustFind(identifier)
	st := IssueState{Identifier: n.identifier, Title: n.title, State: n.state.name, StateType: n.state.typ}
	if n.assignee != nil {
		st.Assignee = n.assignee.id
	}
	for _, l := range n.labels {
		st.Labels = append(st.Labels, l.name)
	}
	return st
}

// Comments are the bodies of the issue's comments, oldest first.
func (f *Fake) Comments(identifier string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.mustFind(identifier)
	var out []string
	for _, c := range f.comments {
		if c.issue == n {
			out = append(out, c.body)
		}
	}
	return out
}

// Operations are the names of the operations sent so far, in order.
func (f *Fake) Operations() []string {
	var out []string
	for _, r := range f.Requests() {
		var body struct {
			Query         string `json:"query"`
			OperationName string `json:"operationName"`
		}
		_ = json.Unmarshal([]byte(r.Body), &body)
		name := body.OperationName
		if name == "" {
			if d, err := parseDocument(body.Query, nil); err == nil {
				name = d.name
			}
		}
		out = append(out, name)
	}
	return out
}

// RateLimitNext makes the next n requests be refused as Linear refuses
// one over its request limit: a 400 whose error says RATELIMITED, the
// limit spent, and its reset (epoch milliseconds) at reset.
func (f *Fake) RateLimitNext(n int, reset time.Time) {
	body, _ := testdata.ReadFile("testdata/error_ratelimited.json")
	for range n {
		f.RefuseNext(fakeforge.Refusal{Status: http.StatusBadRequest, Body: string(body), Headers: map[string]string{
			"X-RateLimit-Requests-Limit":     "5000",
			"X-RateLimit-Requests-Remaining": "0",
			"X-RateLimit-Requests-Reset":     strconv.FormatInt(reset.UnixMilli(), 10),
		}})
	}
}

// newID is a new entity's id, a UUID as Linear's are.
func (f *Fake) newID() string {
	f.seq++
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", f.seq*2654435761%(1<<32), f.seq, f.seq, f.seq, f.seq)
}

// tick is the fake's clock, a minute further on each time.
func (f *Fake) tick() time.Time {
	f.clock = f.clock.Add(time.Minute)
	return f.clock
}

func (f *Fake) team(key string) *team {
	for _, t := range f.teams {
		if t.key == key {
			return t
		}
	}
	panic("fakeforge/linear: no team " + key)
}

func (f *Fake) stateNamed(t *team, name string) *state {
	for _, s := range t.states {
		if s.name == name {
			return s
		}
	}
	panic("fakeforge/linear: team " + t.key + " has no state " + name)
}

func (f *Fake) firstOfType(t *team, typ string) *state {
	for _, s := range t.states {
		if s.typ == typ {
			return s
		}
	}
	return t.states[0]
}

func (f *Fake) userByID(id string) *user {
	for _, u := range f.users {
		if u.id == id {
			return u
		}
	}
	return nil
}

// find is the issue an id or identifier names.
func (f *Fake) find(id string) *issue {
	for _, n := range f.issues {
		if n.id == id || strings.EqualFold(n.identifier, id) {
			return n
		}
	}
	return nil
}

func (f *Fake) mustFind(id string) *issue {
	if n := f.find(id); n != nil {
		return n
	}
	panic("fakeforge/linear: no issue " + id)
}

// markStateTimes sets when the issue was started, completed or canceled,
// as its state says.
func (f *Fake) markStateTimes(n *issue) {
	at := n.updated
	n.completed, n.canceled = nil, nil
	switch n.state.typ {
	case "started":
		n.started = &at
	case "completed":
		n.completed = &at
	case "canceled":
		n.canceled = &at
	}
}

// slug is a title as Linear puts it in an issue's URL.
var slugRun = regexp.MustCompile(`[^a-z0-9]+`)

func slug(title string) string {
	return strings.Trim(slugRun.ReplaceAllString(strings.ToLower(title), "-"), "-")
}

func sortedNewestFirst(issues []*issue) []*issue {
	out := slices.Clone(issues)
	slices.SortStableFunc(out, func(a, b *issue) int { return b.created.Compare(a.created) })
	return out
}
