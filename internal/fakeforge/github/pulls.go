package github

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"os"
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

// pull is what makes an item a pull request.
type pull struct {
	head, base  string
	draft       bool
	mergedAt    time.Time
	mergedBy    string
	mergeCommit string
	// headSHA is the head's tip when it was merged or closed, when the
	// branch may be gone since.
	headSHA string
}

// Merger is who merges a pull request in MergePR: a person, not the
// token's user.
const Merger = "octocat"

// PullRequest is a pull request as a test reads it back.
type PullRequest struct {
	Number      int
	URL         string // its page (html_url)
	Title, Body string
	Head, Base  string
	// State is "open", "closed" (unmerged) or "merged".
	State  string
	Labels []string
	// HeadSHA is the head branch's tip in the bare repository (when it
	// was merged or closed, for one that is not open).
	HeadSHA     string
	MergeCommit string
	// Mergeable is whether the head merges onto the base without a
	// conflict; nil when it is not open or a branch is missing.
	Mergeable *bool
}

// PR is pull request number as it is now; false when there is none.
func (s *Server) PR(number int) (PullRequest, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.pullItem(number)
	if err != nil {
		return PullRequest{}, false
	}
	return s.snapshot(it), true
}

// PRs are the repository's pull requests, oldest first.
func (s *Server) PRs() []PullRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PullRequest
	for _, it := range s.repo(s.opts.Repo).items {
		if it.pull != nil {
			out = append(out, s.snapshot(it))
		}
	}
	return out
}

// OpenPR is the open pull request from head onto base; false when there
// is none.
func (s *Server) OpenPR(head, base string) (PullRequest, bool) {
	for _, pr := range s.PRs() {
		if pr.State == "open" && pr.Head == head && pr.Base == base {
			return pr, true
		}
	}
	return PullRequest{}, false
}

func (s *Server) snapshot(it *item) PullRequest {
	pr := PullRequest{Number: it.number, URL: s.repoWeb(it.repo) + "/pull/" + strconv.Itoa(it.number), Title: it.title, Body: it.body,
		Head: it.pull.head, Base: it.pull.base, State: it.state, Labels: slices.Clone(it.labels), HeadSHA: s.headSHA(it),
		MergeCommit: it.pull.mergeCommit}
	if !it.pull.mergedAt.IsZero() {
		pr.State = "merged"
	}
	pr.Mergeable, _ = s.mergeable(it)
	return pr
}

// MergePR merges pull request number as a person would on GitHub: a
// merge commit of its head onto its base in the bare repository, the pull
// request merged and closed with that commit, and, when its base is the
// default branch, the issues its body closes with a keyword closed. It
// returns the merge commit. A pull request that is not open, or whose
// head conflicts with its base, is not merged.
func (s *Server) MergePR(number int) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.pullItem(number)
	if err != nil {
		return "", err
	}
	if it.state != "open" {
		return "", fmt.Errorf("fake GitHub: pull request #%d is %s; only an open one merges", number, it.state)
	}
	base, okBase := s.tip(it.pull.base)
	head, okHead := s.tip(it.pull.head)
	if !okBase || !okHead {
		return "", fmt.Errorf("fake GitHub: pull request #%d: %s or %s is not a branch of %s", number, it.pull.base, it.pull.head, s.opts.Git)
	}
	tree, clean, err := s.mergeTree(base, head)
	if err != nil {
		return "", err
	}
	if !clean {
		return "", fmt.Errorf("fake GitHub: pull request #%d conflicts with %s; GitHub does not merge it", number, it.pull.base)
	}
	owner, _, _ := strings.Cut(s.opts.Repo, "/")
	msg := fmt.Sprintf("Merge pull request #%d from %s/%s\n\n%s", number, owner, it.pull.head, it.title)
	commit, err := s.git("commit-tree", tree, "-p", base, "-p", head, "-m", msg)
	if err != nil {
		return "", err
	}
	if _, err := s.git("update-ref", "refs/heads/"+it.pull.base, commit, base); err != nil {
		return "", err
	}
	it.pull.mergedAt, it.pull.mergedBy, it.pull.mergeCommit, it.pull.headSHA = now(), Merger, commit, head
	it.setState("closed", "", Merger)
	if it.pull.base == s.opts.DefaultBranch {
		s.closeReferenced(it)
	}
	return commit, nil
}

// closingKeyword is a reference in a pull request's body that closes an
// issue once it is merged into the default branch ("Closes #3", "fixes
// owner/name#4", "Resolved: #5").
var closingKeyword = regexp.MustCompile(`(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+([\w.-]+/[\w.-]+)?#(\d+)\b`)

func (s *Server) closeReferenced(pr *item) {
	for _, m := range closingKeyword.FindAllStringSubmatch(pr.body, -1) {
		id := m[2]
		if m[1] != "" {
			id = m[1] + "#" + m[2]
		}
		if it, err := s.find(id); err == nil && it.pull == nil {
			it.setState("closed", "completed", Merger)
		}
	}
}

// ClosePR closes pull request number without merging it, as a person
// would.
func (s *Server) ClosePR(number int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, err := s.pullItem(number)
	if err != nil {
		return err
	}
	if !it.pull.mergedAt.IsZero() {
		return fmt.Errorf("fake GitHub: pull request #%d is merged", number)
	}
	it.pull.headSHA = s.headSHA(it)
	it.setState("closed", "", Merger)
	return nil
}

// PushToBase commits content to path on branch of the bare repository
// and pushes it, as someone else working on the repository would (to move
// the base under an open pull request, or make it conflict). It returns
// the new commit.
func (s *Server) PushToBase(branch, path, content, subject string) (string, error) {
	if s.opts.Git == "" {
		return "", errors.New("fake GitHub: no Git repository behind the pull requests")
	}
	tmp, err := os.MkdirTemp("", "fakegithub-push-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(tmp) }() // a temporary clone; what is left is the system's to clean
	if _, err := gittest.Output(tmp, "clone", "-q", "--branch", branch, s.opts.Git, "clone"); err != nil {
		return "", err
	}
	dir := filepath.Join(tmp, "clone")
	file := filepath.Join(dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		return "", err
	}
	for _, args := range [][]string{{"add", "--", path}, {"commit", "-q", "-m", subject}, {"push", "-q", "origin", "HEAD:refs/heads/" + branch}} {
		if _, err := gittest.Output(dir, args...); err != nil {
			return "", err
		}
	}
	return gittest.Output(dir, "rev-parse", "HEAD")
}

func (s *Server) pullItem(number int) (*item, error) {
	r := s.repo(s.opts.Repo)
	if number < 1 || number > len(r.items) || r.items[number-1].pull == nil {
		return nil, fmt.Errorf("fake GitHub: no pull request #%d", number)
	}
	return r.items[number-1], nil
}

// withPull is h for the pull request the path's number names; 404 when
// none.
func (s *Server) withPull(h func(http.ResponseWriter, *http.Request, *item)) func(http.ResponseWriter, *http.Request, *repository) {
	return s.withItem(func(w http.ResponseWriter, r *http.Request, it *item) {
		if it.pull == nil {
			notFound(w)
			return
		}
		h(w, r, it)
	})
}

// listPulls is GET /repos/{owner}/{repo}/pulls: state (open by default),
// head as owner:branch, base; newest first unless direction=asc.
func (s *Server) listPulls(w http.ResponseWriter, r *http.Request, rp *repository) {
	q := r.URL.Query()
	state := cmp.Or(q.Get("state"), "open")
	if !slices.Contains([]string{"open", "closed", "all"}, state) {
		invalid(w, "Validation Failed", map[string]any{"resource": "PullRequest", "field": "state", "code": "invalid"})
		return
	}
	headOwner, head, _ := strings.Cut(q.Get("head"), ":")
	if head == "" {
		head, headOwner = headOwner, ""
	}
	owner, _, _ := strings.Cut(rp.name, "/")
	var items []*item
	for _, it := range rp.items {
		switch {
		case it.pull == nil, state != "all" && it.state != state:
		case q.Get("head") != "" && (headOwner != "" && !strings.EqualFold(headOwner, owner) || it.pull.head != head):
		case q.Get("base") != "" && it.pull.base != q.Get("base"):
		default:
			items = append(items, it)
		}
	}
	if q.Get("direction") != "asc" {
		slices.Reverse(items)
	}
	out := []any{}
	for _, it := range page(w, r, items) {
		out = append(out, s.pullJSON(it, false))
	}
	fakeforge.JSON(w, http.StatusOK, out)
}

// createPull is POST /repos/{owner}/{repo}/pulls, refused as GitHub
// refuses it: no title, a head or base that is not a branch, no commits
// between them, or an open pull request from that head onto that base
// already.
func (s *Server) createPull(w http.ResponseWriter, r *http.Request, rp *repository) {
	var req struct {
		Title, Head, Base, Body string
		Draft                   bool
	}
	if !decode(w, r, &req) {
		return
	}
	owner, _, _ := strings.Cut(rp.name, "/")
	head := req.Head
	if o, branch, ok := strings.Cut(head, ":"); ok && strings.EqualFold(o, owner) {
		head = branch
	}
	field := func(name, code string) map[string]any {
		return map[string]any{"resource": "PullRequest", "field": name, "code": code}
	}
	if !strings.EqualFold(rp.name, s.opts.Repo) || s.opts.Git == "" {
		invalid(w, "Validation Failed", field("head", "invalid"))
		return
	}
	if strings.TrimSpace(req.Title) == "" {
		invalid(w, "Validation Failed", field("title", "missing_field"))
		return
	}
	baseSHA, ok := s.tip(req.Base)
	if !ok {
		invalid(w, "Validation Failed", field("base", "invalid"))
		return
	}
	headSHA, ok := s.tip(head)
	if !ok {
		invalid(w, "Validation Failed", field("head", "invalid"))
		return
	}
	for _, it := range rp.items {
		if it.pull != nil && it.state == "open" && it.pull.head == head && it.pull.base == req.Base {
			invalid(w, "Validation Failed", map[string]any{"resource": "PullRequest", "code": "custom",
				"message": fmt.Sprintf("A pull request already exists for %s:%s.", owner, head)})
			return
		}
	}
	if ahead, err := s.git("rev-list", "--count", baseSHA+".."+headSHA); err != nil || ahead == "0" {
		invalid(w, "Validation Failed", map[string]any{"resource": "PullRequest", "code": "custom",
			"message": fmt.Sprintf("No commits between %s and %s", req.Base, head)})
		return
	}
	it := s.add(rp, req.Title, req.Body, s.opts.User)
	it.pull = &pull{head: head, base: req.Base, draft: req.Draft}
	fakeforge.JSON(w, http.StatusCreated, s.pullJSON(it, true))
}

func (s *Server) getPull(w http.ResponseWriter, _ *http.Request, it *item) {
	fakeforge.JSON(w, http.StatusOK, s.pullJSON(it, true))
}

// editPull is PATCH /repos/{owner}/{repo}/pulls/{number}: its title, body,
// state and base.
func (s *Server) editPull(w http.ResponseWriter, r *http.Request, it *item) {
	var req struct{ Title, Body, State, Base *string }
	if !decode(w, r, &req) {
		return
	}
	if req.State != nil && *req.State != "open" && *req.State != "closed" {
		invalid(w, "Validation Failed", map[string]any{"resource": "PullRequest", "field": "state", "code": "invalid"})
		return
	}
	if req.State != nil && *req.State == "open" && !it.pull.mergedAt.IsZero() {
		invalid(w, "Validation Failed", map[string]any{"resource": "PullRequest", "code": "custom",
			"message": "state cannot be changed. The pull request cannot be reopened because it has been merged."})
		return
	}
	if req.Base != nil {
		if _, ok := s.tip(*req.Base); !ok {
			invalid(w, "Validation Failed", map[string]any{"resource": "PullRequest", "field": "base", "code": "invalid"})
			return
		}
		it.pull.base = *req.Base
	}
	if req.Title != nil {
		it.title = *req.Title
	}
	if req.Body != nil {
		it.body = *req.Body
	}
	if req.State != nil {
		if *req.State == "closed" {
			it.pull.headSHA = s.headSHA(it)
		}
		it.setState(*req.State, "", s.opts.User)
	}
	it.updated = now()
	fakeforge.JSON(w, http.StatusOK, s.pullJSON(it, true))
}

// fullOnly are the fields GitHub sends of one pull request and not in a
// list of them (the "pull-request" example against "pull-request-simple").
var fullOnly = []string{"merged", "mergeable", "rebaseable", "mergeable_state", "merged_by", "comments",
	"review_comments", "maintainer_can_modify", "commits", "additions", "deletions", "changed_files"}

// pullJSON is it as GitHub's pulls API shows it: the "pull-request"
// example with what the fake keeps written over it; in a list (full
// false), without what GitHub sends of one pull request only.
func (s *Server) pullJSON(it *item, full bool) object {
	o := s.fixture("pull-request")
	n := strconv.Itoa(it.number)
	api, web := s.repoAPI(it.repo), s.repoWeb(it.repo)
	self, issue := api+"/pulls/"+n, api+"/issues/"+n
	headSHA := s.headSHA(it)
	baseSHA, _ := s.tip(it.pull.base)
	o["url"], o["id"], o["node_id"], o["number"] = self, it.id, nodeID("PR", it.id), it.number
	o["html_url"], o["diff_url"], o["patch_url"] = web+"/pull/"+n, web+"/pull/"+n+".diff", web+"/pull/"+n+".patch"
	o["issue_url"], o["commits_url"], o["comments_url"] = issue, self+"/commits", issue+"/comments"
	o["review_comments_url"], o["review_comment_url"] = self+"/comments", api+"/pulls/comments{/number}"
	o["statuses_url"] = api + "/statuses/" + headSHA
	o["state"], o["locked"], o["title"], o["body"], o["user"] = it.state, false, it.title, it.body, s.user(it.author)
	o["labels"], o["milestone"], o["active_lock_reason"] = s.labelObjects(it.repo, it.labels), nil, nil
	o["created_at"], o["updated_at"], o["closed_at"] = timestamp(it.created), timestamp(it.updated), timestamp(it.closed)
	o["merged_at"], o["merge_commit_sha"] = timestamp(it.pull.mergedAt), nilIfEmpty(it.pull.mergeCommit)
	o["assignees"], o["assignee"] = s.userList(it.assignees), nil
	if len(it.assignees) > 0 {
		o["assignee"] = s.user(it.assignees[0])
	}
	o["requested_reviewers"], o["requested_teams"] = []any{}, []any{}
	owner, _, _ := strings.Cut(it.repo.name, "/")
	for _, side := range []struct{ key, ref, sha string }{{"head", it.pull.head, headSHA}, {"base", it.pull.base, baseSHA}} {
		b := o[side.key].(object)
		b["label"], b["ref"], b["sha"], b["user"] = owner+":"+side.ref, side.ref, side.sha, s.user(owner)
		b["repo"] = s.repository(it.repo)
	}
	o["_links"] = object{"self": href(self), "html": href(web + "/pull/" + n), "issue": href(issue),
		"comments": href(issue + "/comments"), "review_comments": href(self + "/comments"),
		"review_comment": href(api + "/pulls/comments{/number}"), "commits": href(self + "/commits"),
		"statuses": href(api + "/statuses/" + headSHA)}
	o["author_association"], o["auto_merge"], o["draft"] = "OWNER", nil, it.pull.draft
	if !full {
		for _, k := range fullOnly {
			delete(o, k)
		}
		return o
	}
	mergeable, state := s.mergeable(it)
	o["merged"], o["mergeable"], o["rebaseable"], o["mergeable_state"] = !it.pull.mergedAt.IsZero(), mergeable, mergeable, state
	o["merged_by"], o["comments"], o["review_comments"], o["maintainer_can_modify"] = s.user(it.pull.mergedBy), len(it.comments), 0, false
	commits, additions, deletions, files := s.diffStat(baseSHA, headSHA)
	o["commits"], o["additions"], o["deletions"], o["changed_files"] = commits, additions, deletions, files
	return o
}

func href(u string) object { return object{"href": u} }

// git runs git in the bare repository.
func (s *Server) git(args ...string) (string, error) {
	if s.opts.Git == "" {
		return "", errors.New("fake GitHub: no Git repository behind the pull requests")
	}
	return gittest.Output(s.opts.Git, args...)
}

// tip is branch's commit in the bare repository; false when there is no
// such branch.
func (s *Server) tip(branch string) (string, bool) {
	if branch == "" {
		return "", false
	}
	sha, err := s.git("rev-parse", "-q", "--verify", "refs/heads/"+branch+"^{commit}")
	return sha, err == nil && sha != ""
}

// headSHA is it's head's tip: the branch's now while it is open and the
// branch is there, else the one recorded when it was merged or closed.
func (s *Server) headSHA(it *item) string {
	if it.state == "open" {
		if sha, ok := s.tip(it.pull.head); ok {
			return sha
		}
	}
	return it.pull.headSHA
}

// mergeable is whether an open pull request's head merges onto its base
// without a conflict, with GitHub's mergeable_state for it: clean, dirty,
// or unknown (nil) when it is not open or a branch is missing.
func (s *Server) mergeable(it *item) (*bool, string) {
	if it.state != "open" {
		return nil, "unknown"
	}
	base, okBase := s.tip(it.pull.base)
	head, okHead := s.tip(it.pull.head)
	if !okBase || !okHead {
		return nil, "unknown"
	}
	_, clean, err := s.mergeTree(base, head)
	if err != nil {
		return nil, "unknown"
	}
	if clean {
		return &clean, "clean"
	}
	return &clean, "dirty"
}

// mergeTree merges head onto base in the bare repository without a
// worktree: the tree of the merge, and false when they conflict.
func (s *Server) mergeTree(base, head string) (tree string, clean bool, err error) {
	out, err := s.git("merge-tree", "--write-tree", "--no-messages", base, head)
	if exit, ok := errors.AsType[*exec.ExitError](err); ok && exit.ExitCode() == 1 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	tree, _, _ = strings.Cut(out, "\n")
	return tree, true, nil
}

// diffStat is what head brings onto base: its commits, lines added and
// removed, and files changed.
func (s *Server) diffStat(base, head string) (commits, additions, deletions, files int) {
	if base == "" || head == "" {
		return 0, 0, 0, 0
	}
	if n, err := s.git("rev-list", "--count", base+".."+head); err == nil {
		commits, _ = strconv.Atoi(n)
	}
	out, err := s.git("diff", "--numstat", base+"..."+head)
	if err != nil {
		return commits, 0, 0, 0
	}
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		a, _ := strconv.Atoi(f[0]) // "-" for a binary file counts 0
		d, _ := strconv.Atoi(f[1])
		additions, deletions, files = additions+a, deletions+d, files+1
	}
	return commits, additions, deletions, files
}
