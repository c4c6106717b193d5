package gitlab

import (
	"strings"
)

// user is one of the fake's users. The token's user and the project's
// maintainer (who authors the issues and merges merge requests) are there
// from the start.
type user struct {
	id             int64
	username, name string
}

// AddUser adds a user and returns their id; a user of that name already
// there keeps theirs.
func (s *Server) AddUser(username string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.userNamed(username); ok {
		return u.id
	}
	u := user{id: int64(len(s.users) + 1), username: username, name: username}
	s.users = append(s.users, u)
	return u.id
}

func (s *Server) userNamed(username string) (user, bool) {
	for _, u := range s.users {
		if strings.EqualFold(u.username, username) {
			return u, true
		}
	}
	return user{}, false
}

func (s *Server) userByID(id int64) (user, bool) {
	for _, u := range s.users {
		if u.id == id {
			return u, true
		}
	}
	return user{}, false
}

func (s *Server) me() user {
	u, _ := s.userNamed(s.o.User)
	return u
}

func (s *Server) maintainer() user { return s.users[0] }

func (s *Server) profileURL(u user) string { return s.URL + "/" + u.username }

// currentUserJSON is GET /user's answer.
func (s *Server) currentUserJSON() map[string]any {
	u := s.me()
	m := s.fixture("user.json")
	m["id"], m["username"], m["name"] = u.id, u.username, u.name
	m["email"], m["public_email"], m["commit_email"] = u.username+"@example.com", u.username+"@example.com", u.username+"@example.com"
	m["web_url"], m["avatar_url"] = s.profileURL(u), nil
	m["identities"] = []any{}
	return m
}

// usersNamed is GET /users?username=…'s answer: the one user of that name
// (GitLab compares usernames without case), or none.
func (s *Server) usersNamed(username string) []any {
	u, ok := s.userNamed(username)
	if !ok {
		return []any{}
	}
	m := s.fixture("users.json")
	m["id"], m["username"], m["name"], m["state"] = u.id, u.username, u.name, "active"
	m["web_url"], m["avatar_url"] = s.profileURL(u), nil
	return []any{m}
}

// basicUserJSON is a user as an issue or merge request names them
// (author, assignees), shaped as the recorded issue's assignee.
func (s *Server) basicUserJSON(u user) map[string]any {
	base := s.fixture("issue.json")["assignee"].(map[string]any)
	base["id"], base["username"], base["name"], base["state"] = u.id, u.username, u.name, "active"
	base["web_url"], base["avatar_url"] = s.profileURL(u), nil
	return base
}
