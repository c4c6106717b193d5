package github

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// The documented examples answers are built from (testdata/README.md
// names their sources).
//
//go:embed testdata/*.json
var testdata embed.FS

// loadFixtures reads the examples, their github.com URLs turned into the
// fake's own.
func loadFixtures(api, web string) map[string][]byte {
	out := map[string][]byte{}
	for _, name := range []string{"issue", "issue-comment", "pull-request", "private-user"} {
		data, err := testdata.ReadFile("testdata/" + name + ".json")
		if err != nil {
			panic(fmt.Sprintf("fake GitHub: the embedded example %s: %v", name, err))
		}
		data = bytes.ReplaceAll(data, []byte("https://api.github.com"), []byte(api))
		out[name] = bytes.ReplaceAll(data, []byte("https://github.com"), []byte(web))
	}
	// The parts every answer has many of, decoded alone: a user, a
	// label, a repository.
	var issue struct {
		User   json.RawMessage
		Labels []json.RawMessage
	}
	var pr struct {
		Head struct{ Repo json.RawMessage }
	}
	if json.Unmarshal(out["issue"], &issue) != nil || len(issue.Labels) == 0 || json.Unmarshal(out["pull-request"], &pr) != nil {
		panic("fake GitHub: the embedded examples lack a user, a label or a repository")
	}
	out["simple-user"], out["label"], out["repository"] = issue.User, issue.Labels[0], pr.Head.Repo
	return out
}

// object is a JSON object of an answer.
type object = map[string]any

// fixture is a fresh copy of the example name, to overwrite.
func (s *Server) fixture(name string) object {
	var o object
	d := json.NewDecoder(bytes.NewReader(s.fixtures[name]))
	d.UseNumber()
	if err := d.Decode(&o); err != nil {
		panic(fmt.Sprintf("fake GitHub: the embedded example %s: %v", name, err))
	}
	return o
}

// renamed is v with every string's old replaced by new, through objects
// and arrays: the example's octocat made someone else.
func renamed(v any, old, new string) any {
	switch v := v.(type) {
	case string:
		return strings.ReplaceAll(v, old, new)
	case object:
		for k, e := range v {
			v[k] = renamed(e, old, new)
		}
	case []any:
		for i, e := range v {
			v[i] = renamed(e, old, new)
		}
	}
	return v
}

// userID is login's id, the same for every answer. The caller holds mu.
func (s *Server) userID(login string) int64 {
	key := strings.ToLower(login)
	if id, ok := s.users[key]; ok {
		return id
	}
	s.users[key] = s.newID()
	return s.users[key]
}

// user is login as a simple-user object; nil for "".
func (s *Server) user(login string) any {
	if login == "" {
		return nil
	}
	u := renamed(s.fixture("simple-user"), "octocat", login).(object)
	u["id"], u["node_id"] = s.userID(login), nodeID("U", s.userID(login))
	return u
}

// users are logins as simple-user objects.
func (s *Server) userList(logins []string) []any {
	out := []any{}
	for _, l := range logins {
		out = append(out, s.user(l))
	}
	return out
}

// label is a label of repository r as GitHub shows it.
func (s *Server) label(r *repository, name string) object {
	l := s.fixture("label")
	key := strings.ToLower(r.name + "\x00" + name)
	if _, ok := s.labels[key]; !ok {
		s.labels[key] = s.newID()
	}
	l["id"], l["node_id"], l["name"] = s.labels[key], nodeID("LA", s.labels[key]), name
	l["url"] = s.repoAPI(r) + "/labels/" + url.PathEscape(name)
	l["description"], l["color"], l["default"] = nil, "ededed", false
	return l
}

func (s *Server) labelObjects(r *repository, names []string) []any {
	out := []any{}
	for _, n := range names {
		out = append(out, s.label(r, n))
	}
	return out
}

// repoAPI and repoWeb are r's API and web roots.
func (s *Server) repoAPI(r *repository) string { return s.api + "/repos/" + r.name }
func (s *Server) repoWeb(r *repository) string { return s.web + "/" + r.name }

// repository is r as the repository object of a pull request's head and
// base.
func (s *Server) repository(r *repository) object {
	o := renamed(s.fixture("repository"), "octocat/Hello-World", r.name).(object)
	owner, name, _ := strings.Cut(r.name, "/")
	o["name"], o["full_name"], o["owner"] = name, r.name, s.user(owner)
	o["default_branch"] = s.opts.DefaultBranch
	return o
}

// nodeID is a GraphQL node id of the kind GitHub gives (I_ for an issue,
// PR_ for a pull request, …).
func nodeID(kind string, id int64) string { return fmt.Sprintf("%s_kwDOfake%08d", kind, id) }

// timestamp is t as GitHub writes times; nil for the zero time.
func timestamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}
