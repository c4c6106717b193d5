package autopilot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/forge"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/tasks"
)

// With deliver: pr, a finished task's merge is made and verified on the
// remote's base branch, as fetched, exactly as any merge is; then it is
// pushed as the task's branch (ralph/<id>) on the remote, expecting there
// what the remote had (so a person's push to it is never replaced), and a
// pull request is opened from it onto the base branch. The local base
// branch never moves. With close_on: opened the task is closed at once;
// with close_on: merged it waits for a person in the state's reviews,
// which the autopilot follows: merged, the task is closed; closed
// unmerged, it is reopened; conflicting, its merge is made again on the
// base branch's new tip and pushed over the pull request's head.

// Close-on modes of deliver: pr.
const (
	closeOnOpened = "opened"
	closeOnMerged = "merged"
)

// maxFollowWait bounds the wait between two looks at the pull requests.
const maxFollowWait = 10 * time.Minute

// prPlace is where a task's merge is made for a pull request: on the
// remote's base branch, fetched. Its push expects on the task's branch
// what the remote has there now (nothing, or an earlier delivery), or,
// for a merge that brings an open pull request up to date, the head ralph
// pushed for it.
func (m *merger) prPlace(ctx context.Context, task runfiles.TaskMerge) (place, error) {
	remote, err := m.fetchBase(ctx, task.Task)
	if err != nil {
		return place{}, err
	}
	if remote == "" {
		return place{}, &DeliveryError{Task: task.Task, Problem: fmt.Sprintf("%s has no branch %s to open pull requests against", m.deliver.remote, m.base),
			Fix: fmt.Sprintf("push it (git push %s %s), or set autopilot.base_branch to a branch %s has", m.deliver.remote, m.base, m.deliver.remote)}
	}
	p := place{onto: remote, base: remote, remote: remote}
	if task.Updates != nil {
		p.lease = task.Updates.Head
		return p, nil
	}
	if p.lease, err = m.repo.RemoteRef(ctx, m.deliver.remote, "refs/heads/"+task.Branch); err != nil {
		return place{}, &DeliveryError{Task: task.Task, Problem: fmt.Sprintf("reading %s from %s failed", task.Branch, m.deliver.remote), Err: err,
			Fix: fmt.Sprintf("check that %s can be reached (git ls-remote %s)", m.deliver.remote, m.deliver.remote)}
	}
	return p, nil
}

// deliverPR delivers m as a pull request: its verified merge pushed as the
// task's branch, then the pull request opened (or found open, after a
// restart). Each step is recorded once done, and the next run goes on
// from the last one recorded.
func (a *Autopilot) deliverPR(ctx context.Context, m runfiles.TaskMerge) error {
	if m.Step != runfiles.MergePushed {
		pushed, err := a.pushBranch(ctx, m)
		if err != nil || !pushed {
			return err
		}
	}
	pr, err := a.pullRequest(ctx, m)
	if err != nil {
		return &DeliveryError{Task: m.Task, Problem: fmt.Sprintf("%s is on %s as %s, but opening its pull request failed", m.Task, m.Remote, m.Branch),
			Err: err, Fix: "check the forge's token and that it can be reached (autopilot.pr)"}
	}
	if err := a.journal.record(runfiles.TopicTaskPROpened, runfiles.AutopilotPayload{Task: m.Task, Title: m.Title, Number: pr.Number,
		URL: pr.URL, Forge: a.forge(), Commit: m.Commit, Branch: m.Branch}); err != nil {
		return err
	}
	a.follow.changed()
	return nil
}

// forge is the forge deliver: pr opens pull requests on, as recorded with
// each, so that they are named as its people name them.
func (a *Autopilot) forge() string { return a.opts.Settings.PullRequestTarget().Forge }

// pullRequest is m's pull request: the one it brings up to date, which its
// push updated (whatever became of it meanwhile, the next look sees), or
// the one it opens.
func (a *Autopilot) pullRequest(ctx context.Context, m runfiles.TaskMerge) (forge.PullRequest, error) {
	if u := m.Updates; u != nil {
		return forge.PullRequest{Number: u.Number, URL: u.URL, State: forge.StateOpen, Head: m.Branch, Base: a.base, HeadSHA: m.Commit}, nil
	}
	return a.opts.PullRequests.Open(ctx, a.prChange(ctx, m))
}

// pushBranch pushes m's merge as the task's branch on the remote, unless
// it is there already (a restart after the push). It reports false when
// it did not: somebody pushed to the branch since the merge was made, and
// their work is not replaced.
func (a *Autopilot) pushBranch(ctx context.Context, m runfiles.TaskMerge) (bool, error) {
	moved, err := a.pushLeased(ctx, m, m.Branch)
	if err != nil {
		return false, err
	}
	if moved {
		return false, a.theirsOnBranch(ctx, m)
	}
	return true, a.journal.record(runfiles.TopicMergePushed, runfiles.AutopilotPayload{Task: m.Task, Title: m.Title, Commit: m.Commit,
		Remote: m.Remote, Branch: m.Branch})
}

// theirsOnBranch is a task's branch on the remote that somebody pushed to
// since its merge was made: ralph replaces nobody's work. A first
// delivery fails the task, saying so; an open pull request goes back to
// review as it is, its conflicts theirs to resolve.
func (a *Autopilot) theirsOnBranch(ctx context.Context, m runfiles.TaskMerge) error {
	why := fmt.Sprintf("somebody pushed to %s on %s since its merge was made, and ralph does not replace their work", m.Branch, m.Remote)
	if m.Updates == nil {
		return a.failTask(ctx, m.Task, why+"; its verified merge is "+shortHash(m.Commit)+" (push it there yourself, or delete their branch and run again)")
	}
	if err := a.notice(fmt.Sprintf("%s's %s is not brought up to date: %s", m.Task, m.Updates.Name(), why)); err != nil {
		return err
	}
	return a.journal.record(runfiles.TopicTaskPROpened, runfiles.AutopilotPayload{Task: m.Task, Title: m.Title, Number: m.Updates.Number,
		URL: m.Updates.URL, Forge: m.Updates.Forge, Commit: m.Updates.Head, Branch: m.Branch})
}

// prTitle is a pull request's title: the task's, and its id, as an issue
// reference (#12) where the id is an issue's number.
func prTitle(t tasks.Task, remote bool) string {
	id := t.ID
	if remote && strings.Trim(id, "0123456789") == "" {
		id = "#" + id
	}
	return fmt.Sprintf("%s (%s)", cmp.Or(t.Title, t.ID), id)
}

// prChange is the pull request m is delivered as, its title and body told
// nothing secret.
func (a *Autopilot) prChange(ctx context.Context, m runfiles.TaskMerge) forge.Change {
	t, err := a.opts.Source.Show(ctx, m.Task)
	if err != nil {
		t = tasks.Task{ID: m.Task, Title: m.Title}
	}
	var report runfiles.LoopReport
	if path, _, err := runfiles.TaskLog(a.opts.Repo, m.Task); err == nil {
		report, _ = runfiles.ReadLoopReport(path)
	}
	r, ok := a.opts.Source.(tasks.Remote)
	body := prBody(t, a.opts.Source.Name(), report, m, a.base, a.merger.verify != nil)
	return forge.Change{Head: m.Branch, Base: a.base, Title: a.opts.Redactor.String(prTitle(t, ok && r.Remote())),
		Body: a.opts.Redactor.String(body), Labels: a.opts.Settings.PR.Labels}
}

// prBody describes a delivered task for its reviewers: the task, what its
// loop said and did, and what the merged result was checked with.
func prBody(t tasks.Task, source string, report runfiles.LoopReport, m runfiles.TaskMerge, base string, verifies bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ralph autopilot did task `%s` from %s and delivers it here, merged onto `%s` and verified.\n\n", t.ID, source, base)
	fmt.Fprintf(&b, "## %s\n\n", cmp.Or(t.Title, t.ID))
	if t.Description != "" {
		b.WriteString(t.Description + "\n\n")
	}
	if len(t.Criteria) > 0 {
		b.WriteString("### Acceptance criteria\n\n")
		for _, c := range t.Criteria {
			fmt.Fprintf(&b, "- %s\n", oneLine(c.Text))
		}
		b.WriteString("\n")
	}
	b.WriteString("## The loop\n\n")
	if last := report.Last; last != nil {
		fmt.Fprintf(&b, "Its agent's last word (`%s`):\n\n", last.Topic)
		for line := range strings.Lines(strings.TrimSpace(last.PayloadText())) {
			b.WriteString("> " + line)
		}
		b.WriteString("\n\n")
	}
	if end := report.End; end != nil {
		fmt.Fprintf(&b, "- ended: %s (exit %d)", end.Reason, end.ExitCode)
		if end.Message != "" {
			b.WriteString(": " + oneLine(end.Message))
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "- iterations: %d · tokens: %d · cost: %s · runtime: %s\n", end.Iterations, end.Tokens,
			costText(runfiles.CostTotal{USD: end.CostUSD, Computed: end.CostSource == runfiles.CostComputed, Unknown: end.CostUnknown}),
			(time.Duration(end.RuntimeMS) * time.Millisecond).Round(time.Second))
	}
	if len(report.Commits) > 0 {
		b.WriteString("- commits:\n")
		for _, c := range report.Commits {
			fmt.Fprintf(&b, "  - %s %s\n", shortHash(c.Hash), oneLine(c.Subject))
		}
	}
	b.WriteString("\n## Verification\n\n")
	switch {
	case len(m.Verified) > 0:
		fmt.Fprintf(&b, "The merge onto `%s` at %s passed: %s.\n", base, shortHash(m.Base), strings.Join(m.Verified, ", "))
	case verifies:
		fmt.Fprintf(&b, "The merge onto `%s` at %s passed its verify checks.\n", base, shortHash(m.Base))
	default:
		fmt.Fprintf(&b, "The merge onto `%s` at %s has no verify checks (`autopilot.verify`); the loop's acceptance criteria passed.\n", base, shortHash(m.Base))
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// costText is a cost for people: unknown is never $0.
func costText(c runfiles.CostTotal) string {
	switch c.Source() {
	case runfiles.CostUnknown:
		return "unknown"
	case runfiles.CostComputed:
		return fmt.Sprintf("$%.4f (computed from tokens)", c.USD)
	case runfiles.CostReported:
	}
	s := fmt.Sprintf("$%.4f", c.USD)
	if c.Unknown {
		s += " and more (some unknown)"
	}
	return s
}

// follower looks at the open pull requests of the tasks in review (deliver:
// pr, close_on: merged): all of them, then it waits, the wait doubling
// from poll_seconds up to maxFollowWait while nothing changes, and back to
// poll_seconds when something does. The looks run in a goroutine of their
// own and report on seen; the state machine acts on what they saw.
type follower struct {
	every, wait time.Duration
	timer       *time.Timer
	// due fires when the next look is due; nil while none is waited for.
	due <-chan time.Time
	// looking is set while a look is under way; news, when something
	// changed meanwhile (a pull request opened), which the look did not see.
	looking, news bool
	seen          chan []prSeen
	// last is what each task's pull request looked like at the last look,
	// so that a change resets the wait and a thing is said once.
	last map[string]string
}

// prSeen is one pull request as a look saw it.
type prSeen struct {
	task string
	pr   forge.PullRequest
	err  error
}

func newFollower(pollSeconds int) *follower {
	every := time.Duration(cmp.Or(pollSeconds, 30)) * time.Second
	return &follower{every: every, wait: every, seen: make(chan []prSeen, 1), last: map[string]string{}}
}

// changed resets the wait: something changed, and the next look comes
// soon even when a long wait was under way.
func (f *follower) changed() {
	f.wait, f.news = f.every, f.looking
	f.stop()
	f.arm()
}

// arm waits for the next look, unless one is waited for or under way.
func (f *follower) arm() {
	if f.due != nil || f.looking {
		return
	}
	f.timer = time.NewTimer(f.wait)
	f.due = f.timer.C
}

// stop waits for no look.
func (f *follower) stop() {
	if f.timer != nil {
		f.timer.Stop()
	}
	f.timer, f.due = nil, nil
}

// closeOn is when a task delivered as a pull request is closed.
func (a *Autopilot) closeOn() string { return cmp.Or(a.opts.Settings.PR.CloseOn, closeOnMerged) }

// following reports whether the run waits on pull requests for a person
// to merge them.
func (a *Autopilot) following() bool {
	return a.opts.PullRequests != nil && len(a.state().Reviews) > 0
}

// unfollowed says, when the run opens no pull requests, that those an
// earlier run opened wait for review without being followed.
func (a *Autopilot) unfollowed() error {
	n := len(a.state().Reviews)
	if n == 0 || a.opts.PullRequests != nil {
		return nil
	}
	var urls []string
	for _, r := range a.state().Reviews {
		urls = append(urls, r.PR.URL)
	}
	return a.notice(fmt.Sprintf("%d pull requests an earlier run opened wait for review (%s); ralph follows them when it runs with deliver: pr",
		n, strings.Join(urls, ", ")))
}

// followReviews acts on the tasks in review: with close_on: opened, each
// is done; with close_on: merged, the next look at their pull requests is
// waited for.
func (a *Autopilot) followReviews(ctx context.Context) error {
	if !a.following() {
		a.follow.stop()
		return nil
	}
	if a.closeOn() == closeOnOpened {
		for _, r := range slices.Clone(a.state().Reviews) {
			if err := a.completeReview(ctx, r, nil); err != nil {
				return err
			}
		}
		return nil
	}
	a.follow.arm()
	return nil
}

// look starts a look at every pull request in review, in a goroutine
// that reports on a.follow.seen.
func (a *Autopilot) look() {
	a.follow.due, a.follow.timer, a.follow.looking = nil, nil, true
	reviews := slices.Clone(a.state().Reviews)
	ctx := a.lookCtx
	go func() {
		seen := make([]prSeen, 0, len(reviews))
		for _, r := range reviews {
			pr, err := a.opts.PullRequests.Get(ctx, r.PR.Number)
			seen = append(seen, prSeen{task: r.Task, pr: pr, err: err})
		}
		a.follow.seen <- seen
	}()
}

// reviewed acts on what a look saw.
func (a *Autopilot) reviewed(ctx context.Context, seen []prSeen) error {
	a.follow.looking = false
	changed := a.follow.news
	a.follow.news = false
	for _, s := range seen {
		r := a.state().ReviewOf(s.task)
		if r == nil {
			continue
		}
		now, err := a.reviewSeen(ctx, *r, s)
		if now != a.follow.last[s.task] {
			changed = true
			a.follow.last[s.task] = now
		}
		if err != nil {
			return err
		}
	}
	if changed {
		a.follow.changed()
	} else {
		a.follow.wait = min(2*a.follow.wait, maxFollowWait)
	}
	return nil
}

// reviewSeen acts on one pull request as a look saw it, and returns what
// it saw in a word, to tell a change.
func (a *Autopilot) reviewSeen(ctx context.Context, r runfiles.TaskReview, s prSeen) (string, error) {
	pr := s.pr
	switch {
	case errors.Is(s.err, forge.ErrNotFound):
		return "gone", a.rejectReview(ctx, r, fmt.Sprintf("its %s is gone (%s)", r.PR.Name(), r.PR.URL))
	case s.err != nil:
		seen := "error: " + s.err.Error()
		if a.follow.last[r.Task] == seen || a.lookCtx.Err() != nil {
			return seen, nil
		}
		return seen, a.notice(fmt.Sprintf("looking at %s's %s failed: %v; ralph looks again later", r.Task, r.PR.Name(), s.err))
	case pr.State == forge.StateMerged:
		return "merged", a.completeReview(ctx, r, &pr)
	case pr.State == forge.StateClosed:
		return "closed", a.rejectReview(ctx, r, fmt.Sprintf("its %s was closed without being merged: %s", r.PR.Name(), r.PR.URL))
	case !pr.Conflicts:
		return "open " + pr.HeadSHA, nil
	case pr.HeadSHA != "" && pr.HeadSHA != r.PR.Head:
		seen := "conflicts, theirs at " + pr.HeadSHA
		if a.follow.last[r.Task] == seen {
			return seen, nil
		}
		return seen, a.notice(fmt.Sprintf("%s's %s conflicts with %s, but somebody pushed to %s since ralph did: it is theirs to bring up to date",
			r.Task, r.PR.Name(), a.base, r.Branch))
	}
	return "conflicts", a.journal.record(runfiles.TopicTaskPRConflicted, runfiles.AutopilotPayload{Task: r.Task, Title: r.Title,
		Number: r.PR.Number, URL: r.PR.URL, Forge: r.PR.Forge, Commit: r.PR.Head})
}

// completeReview closes a task delivered as a pull request: merged (pr
// says how), or, with close_on: opened, once it is open (pr is nil). The
// close is skipped when the tracker has it closed already (a restart
// after it), and the task's worktree and branch go; the remote's branch
// stays while its pull request is open.
func (a *Autopilot) completeReview(ctx context.Context, r runfiles.TaskReview, pr *forge.PullRequest) error {
	ctx, cancel := steady(ctx)
	defer cancel()
	commit := r.PR.Head
	reason := fmt.Sprintf("delivered by ralph autopilot as %s: %s", r.PR.Name(), r.PR.URL)
	if pr != nil {
		commit = cmp.Or(pr.MergeCommit, r.PR.Head)
		reason = fmt.Sprintf("%s merged into %s as %s: %s", r.PR.Name(), a.base, shortHash(commit), r.PR.URL)
	}
	closed, err := a.closeTask(ctx, r.Task, reason)
	if err != nil {
		return err
	}
	a.fault(FaultClosed)
	a.cleanUp(r.Task, pr == nil)
	p := runfiles.AutopilotPayload{Task: r.Task, Title: r.Title, Commit: commit, Number: r.PR.Number, URL: r.PR.URL, Forge: r.PR.Forge, Unclosed: !closed}
	if err := a.journal.record(runfiles.TopicTaskCompleted, p); err != nil {
		return err
	}
	a.landed.apply(runfiles.TopicTaskCompleted, p)
	return nil
}

// rejectReview is a task whose pull request a person closed unmerged:
// the task fails for this run, which does not try it again, and the
// tracker has it to do again: reopened and unassigned where it can
// (a forge's issues), otherwise told of the failure. Its worktree and
// branch are kept.
func (a *Autopilot) rejectReview(ctx context.Context, r runfiles.TaskReview, reason string) error {
	ctx, cancel := steady(ctx)
	defer cancel()
	if err := a.journal.record(runfiles.TopicTaskFailed, runfiles.AutopilotPayload{Task: r.Task, Title: r.Title, Reason: reason,
		Number: r.PR.Number, URL: r.PR.URL, Forge: r.PR.Forge}); err != nil {
		return err
	}
	if err := a.reopen(ctx, r.Task, reason); err != nil {
		return a.notice(fmt.Sprintf("telling %s that %s is to be done again failed: %v", a.opts.Source.Name(), r.Task, err))
	}
	return a.commitTracker(ctx, "ralph: "+r.Task+" failed")
}

// reopen has the tracker hold task as to be done again: a tracker that
// can reopen a task (a forge's issues) reopens and unassigns it, any
// other is told of its failure.
func (a *Autopilot) reopen(ctx context.Context, task, reason string) error {
	src := a.opts.Source
	for {
		switch s := src.(type) {
		case *redactedSource:
			reason, src = s.r.String(reason), s.Source
			continue
		case *watchedSource:
			src = s.Source
			continue
		case tasks.Reopener:
			return s.Reopen(ctx, task, reason)
		}
		return a.opts.Source.Fail(ctx, task, reason)
	}
}
