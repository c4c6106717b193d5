package autopilot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/tasks"
)

// PreconditionError is a reason the autopilot cannot start, found before
// it changes anything.
type PreconditionError struct {
	Problem string
	Fix     string
}

func (e *PreconditionError) Error() string { return e.Problem }

// Hint says how to fix the problem.
func (e *PreconditionError) Hint() string { return e.Fix }

// Kind: the repository is not as the autopilot needs it.
func (e *PreconditionError) Kind() hint.Kind { return hint.Invalid }

// PreconditionsError is every reason the autopilot cannot start, found
// together so that one attempt names all the fixes.
type PreconditionsError []*PreconditionError

func (e PreconditionsError) Error() string {
	lines := []string{fmt.Sprintf("the autopilot cannot start, for %d reasons:", len(e))}
	for i, p := range e {
		lines = append(lines, fmt.Sprintf("%d. %s", i+1, p.Problem))
	}
	return strings.Join(lines, "\n")
}

// Hint is each problem's fix, numbered as Error numbers the problems.
func (e PreconditionsError) Hint() string {
	lines := make([]string, len(e))
	for i, p := range e {
		lines[i] = fmt.Sprintf("%d. %s", i+1, p.Fix)
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find each problem.
func (e PreconditionsError) Unwrap() []error {
	errs := make([]error, len(e))
	for i, p := range e {
		errs[i] = p
	}
	return errs
}

// Kind: the repository is not as the autopilot needs it.
func (e PreconditionsError) Kind() hint.Kind { return hint.Invalid }

// preconditions gathers the problems found; err is nil when there are
// none, the problem itself when there is one.
type preconditions []*PreconditionError

func (p *preconditions) add(problem, fix string) {
	*p = append(*p, &PreconditionError{Problem: problem, Fix: fix})
}

func (p preconditions) err() error {
	switch len(p) {
	case 0:
		return nil
	case 1:
		return p[0]
	}
	return PreconditionsError(p)
}

// Preflight checks what must hold before anything changes: no autopilot
// (*RunningError) and no loop (*LoopRunningError) runs in the repository's
// checkout, dir is in a git repository with a commit, the base branch is
// the one checked out, no tracked file but the tracker's own has
// uncommitted changes, and the source's tool is on PATH. It returns the
// repository's root and the base branch. Untracked files do not count: a
// merge that would overwrite one is refused when it lands (see
// LandBlockedError). CheckSource, once the source is opened in the root,
// checks the tracker.
//
// The preconditions are checked together: a *PreconditionError when one
// fails, a PreconditionsError naming each when more do, so that a user
// fixes them all before the next try.
//
// configs are the autopilot's own config files (absolute). Like the
// tracker's files, uncommitted changes to them do not count: every task's
// loop reads them from this checkout (ralph loop -c FILE), never from its
// worktree, so each task sees them as they are; a quick start that writes
// a ralph.yml and runs the autopilot at once works as written.
func Preflight(ctx context.Context, dir, baseBranch string, source tasks.Source, configs []string) (root, base string, err error) {
	var failed preconditions
	if root, base, err = checkRepo(ctx, dir, baseBranch, source, configs, &failed); err != nil {
		return root, "", err
	}
	if tool := source.Tool(); tool != "" {
		if _, err := exec.LookPath(tool); err != nil {
			failed.add(fmt.Sprintf("%s is not on PATH: the %s source runs it", tool, source.Name()),
				"install "+tool+", or choose another autopilot.source (tk, beads, prd, checklist, command)")
		}
	}
	if err := failed.err(); err != nil {
		return "", "", err
	}
	return root, base, nil
}

// checkRepo is Preflight's look at the repository: the problems it finds
// are added to failed; the error it returns is something running here, or
// git failing.
func checkRepo(ctx context.Context, dir, baseBranch string, source tasks.Source, configs []string, failed *preconditions) (root, base string, err error) {
	repo := git.Repo{Dir: dir}
	if ok, err := repo.IsRepo(ctx); err != nil || !ok {
		failed.add(dir+" is not in a git repository",
			"the autopilot merges each task's work through git: run it in a repository (git init, and a first commit)")
		return "", "", nil
	}
	if root, err = repo.Root(ctx); err != nil {
		return "", "", err
	}
	// What runs here is said before any precondition, and alone: a second
	// start finds the first one's work in progress in the checkout.
	if err := Running(root); err != nil {
		return root, "", err
	}
	if err := loopInCheckout(root); err != nil {
		return root, "", err
	}
	repo.Dir = root
	if head, _ := repo.Head(ctx); head == "" {
		// Without a commit there is no branch to compare the files
		// with: the first commit settles that too.
		failed.add(errNoBase.Error(), "git commit --allow-empty -m 'start' is enough")
		return root, "", nil
	}
	if base, err = checkBranch(ctx, repo, baseBranch, failed); err != nil {
		return "", "", err
	}
	return root, base, checkClean(ctx, repo, source, ownFiles(root, configs), failed)
}

// ownFiles are the paths, relative to root, of the files among configs
// that are in the repository.
func ownFiles(root string, configs []string) []string {
	var own []string
	for _, c := range configs {
		// git names the root with its links resolved.
		if resolved, err := filepath.EvalSymlinks(c); err == nil {
			c = resolved
		}
		if rel, err := filepath.Rel(root, c); err == nil && filepath.IsLocal(rel) {
			own = append(own, filepath.ToSlash(rel))
		}
	}
	return own
}

// checkBranch adds the problem of a detached HEAD, or of a base branch
// other than the one checked out, to failed, and returns the base branch:
// baseBranch, or the one checked out when that is "".
func checkBranch(ctx context.Context, repo git.Repo, baseBranch string, failed *preconditions) (string, error) {
	current, err := repo.CurrentBranch(ctx)
	if err != nil {
		return "", err
	}
	switch {
	case current == "":
		failed.add("HEAD is detached: the autopilot merges onto the branch checked out here",
			"check out the branch to merge into, e.g. git switch main")
	case baseBranch == "":
		return current, nil
	case baseBranch != current:
		failed.add(fmt.Sprintf("autopilot.base_branch is %s but %s is checked out", baseBranch, current),
			fmt.Sprintf("check out %s (git switch %s), or set base_branch: %s", baseBranch, baseBranch, current))
	}
	return baseBranch, nil
}

// checkClean refuses uncommitted changes to tracked files other than the
// tracker's own, which the autopilot commits itself. No task would see
// them (each worktree starts from the base branch's last commit), and the
// merge of a task that changes one of them could not land. Untracked
// files are left alone: most are in no merge's way, and git names the one
// that is when its merge lands.
//
// The autopilot's own config files (own, relative to the repository)
// do not count either. The problem found is added to failed.
func checkClean(ctx context.Context, repo git.Repo, source tasks.Source, own []string, failed *preconditions) error {
	pending, err := repo.Uncommitted(ctx)
	if err != nil {
		return err
	}
	landing, err := landingPaths(ctx, repo)
	if err != nil {
		return err
	}
	var dirty []string
	for _, p := range slices.Sorted(maps.Keys(pending)) {
		if !pending[p].Untracked() && !underAny(p, source.Files()) && !slices.Contains(landing, p) && !slices.Contains(own, p) {
			dirty = append(dirty, p)
		}
	}
	if len(dirty) == 0 {
		return nil
	}
	shown := dirty
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(dirty)-5))
	}
	fix := "commit or stash them first (git stash; untracked files may stay): each task's worktree starts from the base branch's last commit, " +
		"so no task would see them, and merges land in this checkout"
	if len(source.Files()) == 0 && source.Name() == "command" {
		fix += "; if the tracker's commands changed them, commit them, and list them in autopilot.source.files so that ralph commits them itself"
	}
	failed.add("the base branch has uncommitted changes: "+strings.Join(shown, ", "), fix)
	return nil
}

// CheckSource reads the source's ready tasks as the run will, so that a
// tracker the autopilot cannot use (one it cannot read, one with two tasks
// of one id, one whose tasks wait for a task it does not have or for each
// other) is refused before anything changes.
func CheckSource(ctx context.Context, source tasks.Source) error {
	_, err := source.Ready(ctx)
	var dup *tasks.DuplicateIDError
	var unknown *tasks.UnknownDepError
	var cycle *tasks.DepCycleError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &dup), errors.As(err, &unknown), errors.As(err, &cycle):
		// They say where in the tracker, which is all there is to say.
		return err
	}
	return fmt.Errorf("list the ready tasks of %s: %w", source.Name(), err)
}

// LandBlockedError is a verified merge that could not land because
// uncommitted files of the user's checkout are in the way of the
// fast-forward. The checkout is at fault, not the task: the merge stays in
// the queue, the run ends (resumable), and the next `ralph autopilot`
// lands it first, once the files are out of the way.
type LandBlockedError struct {
	Task string
	Base string
	Err  *git.OverwriteError
}

func (e *LandBlockedError) Error() string {
	var parts []string
	if u := e.Err.Untracked; len(u) > 0 {
		parts = append(parts, fmt.Sprintf("%s, untracked in this checkout, would be overwritten by the merge's own", strings.Join(u, ", ")))
	}
	if m := e.Err.Modified; len(m) > 0 {
		parts = append(parts, fmt.Sprintf("the uncommitted changes to %s in this checkout would be overwritten by the merge's", strings.Join(m, ", ")))
	}
	return fmt.Sprintf("the merge of %s is verified, but %s cannot move to it: %s", e.Task, e.Base, strings.Join(parts, "; "))
}

func (e *LandBlockedError) Unwrap() error { return e.Err }

// Kind: the user's files are in the merge's way.
func (e *LandBlockedError) Kind() hint.Kind { return hint.Conflict }

// Hint says how to get the files out of the way.
func (e *LandBlockedError) Hint() string {
	var steps []string
	if u := e.Err.Untracked; len(u) == 1 {
		steps = append(steps, "move "+u[0]+" out of the way (or delete it)")
	} else if len(u) > 1 {
		steps = append(steps, "move "+strings.Join(u, ", ")+" out of the way (or delete them)")
	}
	if m := e.Err.Modified; len(m) > 0 {
		steps = append(steps, "commit or stash your changes to "+strings.Join(m, ", ")+" (git stash; git stash pop afterwards)")
	}
	return strings.Join(steps, ", and ") + ", then run ralph autopilot again: it lands the merge of " + e.Task + " first and goes on"
}

// blockedLand is the end of a run whose verified merge of m cannot land:
// it returns the error that ends the run, and says so at once when loops
// still run, which may take a while to end.
func (a *Autopilot) blockedLand(m runfiles.TaskMerge, inTheWay *git.OverwriteError) error {
	err := &LandBlockedError{Task: m.Task, Base: a.base, Err: inTheWay}
	if len(a.handles) == 0 && len(a.launcher.pending) == 0 {
		return err
	}
	if nerr := a.notice(err.Error() + "; no new task starts, and the run ends once the running loops have finished (" + err.Hint() + ")"); nerr != nil {
		return nerr
	}
	return err
}

// landingPaths are the paths of the checkout that a verified merge of
// the unfinished autopilot run may have half-written, when a machine went
// down as the base branch moved to it: the run finishes that move.
func landingPaths(ctx context.Context, repo git.Repo) ([]string, error) {
	st, err := runfiles.PeekAutopilotState(runfiles.In(repo.Dir).Path())
	if err != nil || st.Ended != nil {
		return nil, err
	}
	var paths []string
	for _, m := range st.MergeQueue {
		if m.Step != runfiles.MergeDone && m.Step != runfiles.MergePushed {
			continue
		}
		names, err := repo.DiffNames(ctx, m.Base, m.Commit)
		if err != nil {
			return nil, err
		}
		paths = append(paths, names...)
	}
	return paths, nil
}

func underAny(path string, dirs []string) bool {
	for _, d := range dirs {
		d = strings.TrimSuffix(d, "/")
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

// RunningError means an autopilot runs in the repository already. For a
// second `ralph autopilot` that is what it was asked for (the command
// says so and exits 0); for a `ralph loop` in the same checkout it is a
// refusal.
type RunningError struct {
	Repo   string
	Holder runfiles.LockInfo
}

func (e *RunningError) Error() string {
	return fmt.Sprintf("autopilot run %s is running in %s (%s)", e.Holder.RunID, e.Repo, describeHolder(e.Holder))
}

// Hint says how to see the running autopilot and stop it.
func (e *RunningError) Hint() string {
	return "see it with `ralph autopilot status`, stop it with `ralph autopilot stop` (or `ralph autopilot stop --now`)"
}

// Kind: another autopilot holds the repository now.
func (e *RunningError) Kind() hint.Kind { return hint.Conflict }

// LoopRunningError means a `ralph loop` runs in the checkout the
// autopilot would merge into: the two would change the same files.
type LoopRunningError struct {
	Repo   string
	Holder runfiles.LockInfo
}

func (e *LoopRunningError) Error() string {
	return fmt.Sprintf("a ralph loop is running in %s (run %s, %s): the autopilot merges its tasks into this checkout and cannot share it",
		e.Repo, e.Holder.RunID, describeHolder(e.Holder))
}

// Hint says how to see the loop, stop it, or wait for it.
func (e *LoopRunningError) Hint() string {
	return "see it with `ralph status` or `ralph events -f`, stop it with `ralph stop`, or start the autopilot once it has ended; a loop run with `ralph loop --worktree` works beside the autopilot"
}

// Kind: a loop holds the checkout now.
func (e *LoopRunningError) Kind() hint.Kind { return hint.Conflict }

func describeHolder(h runfiles.LockInfo) string {
	s := fmt.Sprintf("pid %d", h.PID)
	if h.Host != "" {
		s += " on " + h.Host
	}
	if !h.StartedAt.IsZero() {
		s += ", started " + h.StartedAt.Local().Format(time.DateTime)
	}
	return s
}

// Running reports whether an autopilot runs in the repository whose root
// is repo, as its lock says: a *RunningError naming it, or nil. It takes
// no lock.
func Running(repo string) error {
	if held, info := runfiles.LockHeld(runfiles.In(repo).AutopilotLock()); held {
		return &RunningError{Repo: repo, Holder: info}
	}
	return nil
}

// loopInCheckout reports a `ralph loop` whose workspace is repo itself (its
// .ralph/ is the autopilot's) as a *LoopRunningError. The task loops'
// workspaces are their worktrees, with a .ralph/ of their own.
func loopInCheckout(repo string) error {
	if held, info := runfiles.LockHeld(runfiles.In(repo).Lock()); held {
		return &LoopRunningError{Repo: repo, Holder: info}
	}
	return nil
}

// acquireLock takes .ralph/autopilot.lock for a run with runID. A lock
// held by a live autopilot is refused with *RunningError, and a `ralph
// loop` running in the same checkout with *LoopRunningError. The loop
// checks the autopilot's lock once it holds its own, as the autopilot
// checks the loop's once it holds its own: of two that start together
// at least one sees the other, so they never run together.
func acquireLock(ctx context.Context, repo, runID string, now time.Time) (*runfiles.Lock, error) {
	host, _ := os.Hostname()
	lock, err := runfiles.AcquireLock(ctx, runfiles.In(repo).AutopilotLock(),
		runfiles.LockInfo{RunID: runID, PID: os.Getpid(), Host: host, StartedAt: now.UTC()}, runfiles.LockOptions{})
	if held, ok := errors.AsType[*runfiles.LockHeldError](err); ok && !held.HolderGone && held.Holder.PID != 0 {
		return nil, &RunningError{Repo: repo, Holder: held.Holder}
	}
	if err != nil {
		return nil, err
	}
	if err := loopInCheckout(repo); err != nil {
		_ = lock.Release()
		return nil, err
	}
	return lock, nil
}

// open loads the state, starts a new run or goes on with an unfinished
// one, and commits tracker changes left uncommitted.
func (a *Autopilot) open(ctx context.Context, dir, runID string, lock *runfiles.Lock) error {
	opts := a.opts
	if err := runfiles.IgnoreOwnFilesIfMissing(dir); err != nil {
		return err
	}
	if err := repairLogTail(dir, runfiles.Dir(dir).AutopilotEvents()); err != nil {
		return err
	}
	var folded []events.Record
	st, notice, err := runfiles.LoadAutopilotState(dir, opts.Now(), opts.Redactor, func(r events.Record) { folded = append(folded, r) })
	if err != nil {
		return err
	}
	log, err := events.OpenLog(runfiles.Dir(dir).AutopilotEvents())
	if err != nil {
		return ralphdir.Explain(runfiles.Dir(dir).AutopilotEvents(), err)
	}
	a.journal = &journal{dir: dir, log: log, state: st, now: opts.Now, onEvent: opts.OnEvent,
		hooks: opts.Hooks, hookCtx: context.WithoutCancel(ctx), redactor: opts.Redactor}
	// Lines the last autopilot folded but died before its hooks had
	// started are due now; those it started and did not see end are
	// recorded as interrupted.
	if hookErr, err := a.journal.fire(folded); err != nil || hookErr != nil {
		return errors.Join(err, hookErr)
	}
	if err := a.setUp(ctx); err != nil {
		return err
	}
	if err := a.begin(lock, runID); err != nil {
		return err
	}
	if notice != "" {
		if err := a.notice(notice); err != nil {
			return err
		}
	}
	if prev := lock.Previous; prev.PID != 0 {
		if err := a.notice(fmt.Sprintf("took over the lock of autopilot run %s (pid %d on %s, started %s), which is no longer running",
			prev.RunID, prev.PID, prev.Host, prev.StartedAt.Format(time.RFC3339))); err != nil {
			return err
		}
	}
	return a.commitTracker(ctx, "ralph: record the tracker's changes before the autopilot starts")
}

// setUp fills the git side: the base branch and the merger.
func (a *Autopilot) setUp(ctx context.Context) error {
	s := a.opts.Settings
	a.base = s.BaseBranch
	if a.base == "" {
		current, err := a.repo.CurrentBranch(ctx)
		if err != nil {
			return err
		}
		a.base = current
	}
	worktrees := s.WorktreesDir
	if !filepath.IsAbs(worktrees) {
		worktrees = filepath.Join(a.opts.Repo, worktrees)
	}
	if err := ensureIgnoredDir(a.opts.Repo, worktrees); err != nil {
		return err
	}
	// The tasks' files are written as each task starts; a link in their
	// place is the repository's to fix, not the task's failure.
	if err := ralphdir.MkdirAll(a.journal.dir, filepath.Join(a.journal.dir, runfiles.TasksDir)); err != nil {
		return err
	}
	a.merger = &merger{repo: a.repo, base: a.base, worktrees: worktrees, tracker: a.opts.Source.Files(),
		mode: s.Merge, verify: s.Verify, deliver: newDelivery(s.Deliver, s.Remote),
		sandbox: a.opts.VerifySandbox}
	if a.merger.deliver.mode == deliverPR && a.opts.PullRequests == nil {
		return errors.New("autopilot.deliver is pr, but no forge to open pull requests on was given")
	}
	var err error
	if a.merges, err = a.repo.MergedTasks(ctx, "", "refs/heads/"+a.base); err != nil {
		return fmt.Errorf("read the tasks merged into %s: %w", a.base, err)
	}
	a.landed, err = readLandings(runfiles.Dir(a.journal.dir).AutopilotEvents())
	return err
}

// ensureIgnoredDir makes dir (makeDirIn) with a .gitignore of "*", so the
// worktrees in it (the tasks', and the loops' in .loops) never show up as
// changes of the user's checkout.
func ensureIgnoredDir(repo, dir string) error {
	if err := makeDirIn(repo, dir); err != nil {
		return err
	}
	// O_EXCL: a file there is kept, and a link there is not followed.
	f, err := os.OpenFile(filepath.Join(dir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString("# ralph's worktrees: the autopilot's tasks', and ralph loop --worktree's in .loops\n*\n")
	return errors.Join(err, f.Close())
}

// makeDirIn makes dir, a directory for worktrees. One in the repository
// is held to .ralph/'s rules (internal/ralphdir): a repository that brings
// it as a link would have ralph make worktrees, and write files, wherever
// the link points. One the user set outside the repository is theirs to
// place.
func makeDirIn(repo, dir string) error {
	if rel, err := filepath.Rel(repo, dir); err == nil && filepath.IsLocal(rel) {
		top, _, _ := strings.Cut(rel, string(filepath.Separator))
		return ralphdir.MkdirAll(filepath.Join(repo, top), dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}

// begin records autopilot.started: a new run, or the unfinished one going
// on, whose persisted settings win over the flags.
func (a *Autopilot) begin(lock *runfiles.Lock, runID string) error {
	st, s := a.state(), a.opts.Settings
	if st.RunID != "" && st.Ended == nil {
		var diffs []string
		if st.Parallel != s.Parallel {
			diffs = append(diffs, fmt.Sprintf("parallel %d (asked for %d)", st.Parallel, s.Parallel))
		}
		if st.Source != a.opts.Source.Name() {
			diffs = append(diffs, fmt.Sprintf("tasks from %s (asked for %s, which is used from now on)", st.Source, a.opts.Source.Name()))
		}
		if st.MaxTasks != s.MaxTasks {
			diffs = append(diffs, fmt.Sprintf("max_tasks %d (asked for %d)", st.MaxTasks, s.MaxTasks))
		}
		if err := lock.Update(runfiles.LockInfo{RunID: st.RunID, PID: os.Getpid(), Host: hostname(), StartedAt: a.now().UTC()}); err != nil {
			return err
		}
		p := runfiles.AutopilotPayload{RunID: st.RunID, Source: a.opts.Source.Name(), MaxTasks: st.MaxTasks, Parallel: st.Parallel, Sets: a.opts.Sets,
			Message: "resuming the unfinished run"}
		if err := a.journal.record(runfiles.TopicAutopilotStarted, p); err != nil {
			return err
		}
		if len(diffs) > 0 {
			return a.notice("the unfinished run keeps its settings: " + strings.Join(diffs, ", "))
		}
		return nil
	}
	return a.journal.record(runfiles.TopicAutopilotStarted, runfiles.AutopilotPayload{RunID: runID, Source: a.opts.Source.Name(),
		MaxTasks: s.MaxTasks, Parallel: s.Parallel, Sets: a.opts.Sets})
}

// UnfinishedSets are the --set assignments of the unfinished autopilot run
// of the repository dir is in, which a start that goes on with it lays its
// own over (as `ralph loop --resume` does a run's); none when there is no
// such run, or dir is in no repository (Preflight says so).
func UnfinishedSets(ctx context.Context, dir string) ([]string, error) {
	repo := git.Repo{Dir: dir}
	if ok, err := repo.IsRepo(ctx); err != nil || !ok {
		return nil, nil
	}
	root, err := repo.Root(ctx)
	if err != nil {
		return nil, err
	}
	st, err := runfiles.PeekAutopilotState(runfiles.In(root).Path())
	if err != nil || st.RunID == "" || st.Ended != nil {
		return nil, err
	}
	return st.Sets, nil
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

// repairLogTail ends a last line cut short by a kill with a newline, so
// the next event starts a line of its own. path is in the .ralph
// directory dir.
func repairLogTail(dir, path string) error {
	f, err := ralphdir.OpenFile(dir, path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, fi.Size()-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	_, err = f.WriteAt([]byte("\n"), fi.Size())
	return err
}
