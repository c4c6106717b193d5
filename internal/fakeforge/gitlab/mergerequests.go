package gitlab

import (
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/fakeforge"
	"github.com/ralph-loop/ralph/internal/gittest"
)

type mergeRequest struct {
	id, iid            int64
	title, description string
	source, target     string
	labels             []string
	// state is "opened", "closed" or "merged".
	state   string
	author  int64
	created time.Time
	updated time.Time
	// sha is the source branch's head when the merge request was merged
	// or closed; while it is open, the branch's head is read from the
	// repository at each answer, as GitLab follows pushes.
	sha         string
	mergeCommit string
	merged      *time.Time
	closed      *time.Time
}

// MRState is a merge request as the fake keeps it.
type MRState struct {
	State          string // opened, closed or merged
	Title          string
	Description    string
	Source, Target string
	Labels         []string
	// SHA is the source branch's head (when merged or closed: then).
	SHA string
	// MergeCommit is the merge commit on the target branch, once merged.
	MergeCommit string
	Conflicts   bool
}

// MRs is how many merge requests there are; their iids are 1 to MRs().
func (s *Server) MRs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mrs)
}

// MR returns merge request iid's state; the test fails when there is none.
func (s *Server) MR(iid int) MRState {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	mr := s.mr(int64(iid))
	if mr == nil {
		s.t.Fatalf("fake GitLab: no merge request !%d", iid)
		return MRState{}
	}
	sha, conflicts := s.headAndConflicts(mr)
	return MRState{State: mr.state, Title: mr.title, Description: mr.description, Source: mr.source, Target: mr.target,
		Labels: slices.Clone(mr.labels), SHA: sha, MergeCommit: mr.mergeCommit, Conflicts: conflicts}
}

// MergeMR merges merge request iid as its reviewer would: a merge commit
// of its source branch on its target branch in the repository ("Merge
// branch 'a' into 'b'", as GitLab writes it), and, when the target is the
// default branch, the issues its description closes ("Closes #3") closed.
// It returns the merge commit; the test fails when the merge request is
// not open or conflicts.
func (s *Server) MergeMR(iid int) string {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	mr := s.mr(int64(iid))
	if mr == nil || mr.state != "opened" {
		s.t.Fatalf("fake GitLab: merge request !%d is not open", iid)
		return ""
	}
	commit, err := s.merge(mr)
	if err != nil {
		s.t.Fatalf("fake GitLab: merge !%d: %v", iid, err)
		return ""
	}
	now := time.Now()
	mr.sha, _ = s.branchHead(mr.source)
	mr.state, mr.mergeCommit, mr.merged, mr.updated = "merged", commit, &now, now
	if s.isDefaultBranch(mr.target) {
		for _, n := range closesIssues(mr.description) {
			if is := s.issue(n); is != nil {
				s.setState(is, "closed", s.maintainer().id)
			}
		}
	}
	return commit
}

// CloseMR closes merge request iid without merging it, as a reviewer who
// turns it down would.
func (s *Server) CloseMR(iid int) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	mr := s.mr(int64(iid))
	if mr == nil || mr.state != "opened" {
		s.t.Fatalf("fake GitLab: merge request !%d is not open", iid)
		return
	}
	now := time.Now()
	mr.sha, _ = s.branchHead(mr.source)
	mr.state, mr.closed, mr.updated = "closed", &now, now
}

// CommitToBranch commits content to path on branch of the repository, as
// someone else pushing would (to make a merge request conflict), and
// returns the commit. A branch not there yet starts at the default
// branch's head.
func (s *Server) CommitToBranch(branch, path, content, message string) string {
	s.t.Helper()
	clone := filepath.Join(s.t.TempDir(), "clone")
	gittest.Run(s.t, s.t.TempDir(), "clone", "-q", s.o.Repo, clone)
	if _, err := gittest.Output(clone, "rev-parse", "--verify", "-q", "refs/remotes/origin/"+branch); err == nil {
		gittest.Run(s.t, clone, "checkout", "-q", "-B", branch, "origin/"+branch)
	} else {
		gittest.Run(s.t, clone, "checkout", "-q", "-b", branch)
	}
	commit := gittest.CommitFile(s.t, clone, path, content, message)
	gittest.Run(s.t, clone, "push", "-q", "origin", "HEAD:refs/heads/"+branch)
	return commit
}

// closingPattern is GitLab's default issue closing pattern, for issues of
// the same project: "Closes #3", "fixes #4", "Resolves: #5".
var closingPattern = regexp.MustCompile(`(?i)\b(?:clos(?:e[sd]?|ing)|fix(?:e[sd]|ing)?|resolv(?:e[sd]?|ing)|implement(?:s|ed|ing)?):? +(?:issues? +)?#(\d+)\b`)

func closesIssues(description string) []int64 {
	var out []int64
	for _, m := range closingPattern.FindAllStringSubmatch(description, -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		out = append(out, n)
	}
	return out
}

func (s *Server) mr(iid int64) *mergeRequest {
	if iid < 1 || iid > int64(len(s.mrs)) {
		return nil
	}
	return s.mrs[iid-1]
}

func (s *Server) withMR(w http.ResponseWriter, rt route, do func(*mergeRequest)) {
	mr := s.mr(rt.nums[0])
	if mr == nil {
		notFound(w, "404 Not found")
		return
	}
	do(mr)
}

// createMR is POST /projects/:id/merge_requests.
func (s *Server) createMR(w http.ResponseWriter, r *http.Request) {
	p, err := paramsOf(r)
	if err != nil {
		badRequest(w, err.Error())
		return
	}
	title, _ := p.str("title")
	source, _ := p.str("source_branch")
	target, _ := p.str("target_branch")
	description, _ := p.str("description")
	labels, _ := p.list("labels")
	for name, v := range map[string]string{"source_branch": source, "target_branch": target, "title": title} {
		if v == "" {
			badRequest(w, name+" is missing")
			return
		}
	}
	if problem, status := s.refuseMR(source, target); problem != "" {
		fakeforge.JSON(w, status, map[string]any{"message": []string{problem}})
		return
	}
	created := s.nextCreated()
	mr := &mergeRequest{id: s.nextID(), iid: int64(len(s.mrs) + 1), title: title, description: description, source: source,
		target: target, labels: labels, state: "opened", author: s.me().id, created: created, updated: created}
	s.mrs = append(s.mrs, mr)
	fakeforge.JSON(w, http.StatusCreated, s.mrJSON(mr, s.fixture("merge_request.json")))
}

// refuseMR says why GitLab would not open a merge request from source to
// target, with the status it answers; "" when it would.
func (s *Server) refuseMR(source, target string) (string, int) {
	if s.o.Repo == "" {
		return "the fake has no repository (Options.Repo) for merge requests", http.StatusUnprocessableEntity
	}
	if source == target {
		return "You can't use same project/branch for source and target", http.StatusUnprocessableEntity
	}
	for _, b := range []string{source, target} {
		if _, ok := s.branchHead(b); !ok {
			return fmt.Sprintf("Branch %q does not exist", b), http.StatusBadRequest
		}
	}
	for _, mr := range s.mrs {
		if mr.state == "opened" && mr.source == source && mr.target == target {
			return fmt.Sprintf("Another open merge request already exists for this source branch: !%d", mr.iid), http.StatusConflict
		}
	}
	return "", 0
}

// listMRs is GET /projects/:id/merge_requests: state, source_branch,
// target_branch, newest first unless sort=asc, paginated.
func (s *Server) listMRs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var list []*mergeRequest
	for _, mr := range s.mrs {
		state := q.Get("state")
		if (state == "" || state == "all" || state == mr.state) && matches(q.Get("source_branch"), mr.source) &&
			matches(q.Get("target_branch"), mr.target) {
			list = append(list, mr)
		}
	}
	if q.Get("sort") != "asc" {
		slices.Reverse(list)
	}
	out := []any{}
	for _, mr := range paginate(w, r, list) {
		out = append(out, s.mrJSON(mr, s.fixture("merge_requests.json")))
	}
	fakeforge.JSON(w, http.StatusOK, out)
}

func matches(want, have string) bool { return want == "" || want == have }

// mrJSON is merge request mr as GitLab answers it, built on base, a
// recorded merge request.
func (s *Server) mrJSON(mr *mergeRequest, base map[string]any) map[string]any {
	m := base
	sha, conflicts := s.headAndConflicts(mr)
	m["id"], m["iid"], m["project_id"] = mr.id, mr.iid, s.o.ProjectID
	m["source_project_id"], m["target_project_id"] = s.o.ProjectID, s.o.ProjectID
	m["title"], m["description"], m["state"] = mr.title, mr.description, mr.state
	m["source_branch"], m["target_branch"] = mr.source, mr.target
	m["labels"] = append([]string{}, mr.labels...)
	author, _ := s.userByID(mr.author)
	m["author"], m["assignee"], m["assignees"], m["reviewers"] = s.basicUserJSON(author), nil, []any{}, []any{}
	m["milestone"], m["work_in_progress"], m["draft"], m["squash"] = nil, false, false, false
	m["created_at"], m["updated_at"] = timeJSON(mr.created), timeJSON(mr.updated)
	m["merged_at"], m["closed_at"] = orNil(mr.merged), orNil(mr.closed)
	m["merged_by"], m["closed_by"] = nil, nil
	if mr.merged != nil {
		m["merged_by"] = s.basicUserJSON(s.maintainer())
	}
	if mr.closed != nil {
		m["closed_by"] = s.basicUserJSON(s.maintainer())
	}
	m["user_notes_count"], m["upvotes"], m["downvotes"] = 0, 0, 0
	m["sha"], m["merge_commit_sha"], m["has_conflicts"] = sha, nil, conflicts
	if mr.mergeCommit != "" {
		m["merge_commit_sha"] = mr.mergeCommit
	}
	m["merge_status"], m["detailed_merge_status"] = mergeStatus(mr.state, conflicts)
	m["reference"] = "!" + strconv.FormatInt(mr.iid, 10)
	m["web_url"] = s.webURL("merge_requests/%d", mr.iid)
	m["merge_when_pipeline_succeeds"], m["discussion_locked"], m["should_remove_source_branch"] = false, nil, nil
	for _, k := range []string{"pipeline", "head_pipeline", "latest_build_started_at", "latest_build_finished_at",
		"first_deployed_to_production_at", "merge_error", "approvals_before_merge"} {
		if _, ok := m[k]; ok {
			m[k] = nil
		}
	}
	if _, ok := m["diff_refs"]; ok {
		start, _ := s.branchHead(mr.target)
		mergeBase, _ := gittest.Output(s.o.Repo, "merge-base", start, sha)
		m["diff_refs"] = map[string]any{"base_sha": mergeBase, "head_sha": sha, "start_sha": start}
	}
	if _, ok := m["user"]; ok {
		m["user"] = map[string]any{"can_merge": true}
	}
	if _, ok := m["first_contribution"]; ok {
		m["first_contribution"] = false
	}
	return m
}

// mergeStatus is the deprecated merge_status and detailed_merge_status.
func mergeStatus(state string, conflicts bool) (string, string) {
	switch {
	case state != "opened":
		return "can_be_merged", "not_open"
	case conflicts:
		return "cannot_be_merged", "conflict"
	}
	return "can_be_merged", "mergeable"
}

// headAndConflicts are the merge request's head commit and, while it is
// open, whether it conflicts with its target branch.
func (s *Server) headAndConflicts(mr *mergeRequest) (string, bool) {
	if mr.state != "opened" {
		return mr.sha, false
	}
	head, _ := s.branchHead(mr.source)
	_, err := s.mergeTree(mr)
	return head, errors.Is(err, errConflict)
}

var errConflict = errors.New("the merge conflicts")

// mergeTree is the tree of the source branch merged into the target,
// written to the repository; errConflict when it conflicts.
func (s *Server) mergeTree(mr *mergeRequest) (string, error) {
	out, err := gittest.Output(s.o.Repo, "merge-tree", "--write-tree", "refs/heads/"+mr.target, "refs/heads/"+mr.source)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return "", errConflict
	}
	if err != nil {
		return "", err
	}
	return strings.Fields(out)[0], nil
}

// merge makes the merge commit on the target branch and returns it.
func (s *Server) merge(mr *mergeRequest) (string, error) {
	tree, err := s.mergeTree(mr)
	if err != nil {
		return "", err
	}
	target, _ := s.branchHead(mr.target)
	source, _ := s.branchHead(mr.source)
	message := fmt.Sprintf("Merge branch '%s' into '%s'\n\n%s\n\nSee merge request %s!%d", mr.source, mr.target, mr.title, s.o.Project, mr.iid)
	commit, err := gittest.Output(s.o.Repo, "commit-tree", tree, "-p", target, "-p", source, "-m", message)
	if err != nil {
		return "", err
	}
	if _, err := gittest.Output(s.o.Repo, "update-ref", "refs/heads/"+mr.target, commit, target); err != nil {
		return "", err
	}
	return commit, nil
}

func (s *Server) branchHead(branch string) (string, bool) {
	if s.o.Repo == "" {
		return "", false
	}
	sha, err := gittest.Output(s.o.Repo, "rev-parse", "--verify", "-q", "refs/heads/"+branch+"^{commit}")
	return sha, err == nil
}

func (s *Server) isDefaultBranch(branch string) bool {
	head, err := gittest.Output(s.o.Repo, "symbolic-ref", "--short", "HEAD")
	return err == nil && head == branch
}
