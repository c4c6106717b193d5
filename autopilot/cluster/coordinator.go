package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// CoordinatorOptions configure a Coordinator.
type CoordinatorOptions struct {
	JetStream jetstream.JetStream
	// Signer signs the tasks; workers run only tasks signed by a key they
	// trust.
	Signer *Signer
	// Trust are the keys of the workers whose results and event batches
	// the coordinator takes; others are dropped, and logged.
	Trust *Keyring
	// Repo is the autopilot's repository: the user's checkout.
	Repo string
	// RemoteURL is the shared remote: the coordinator pushes each task's
	// start there, and the workers fetch it and push their work back.
	RemoteURL string
	// Host names the coordinator in the tasks it sends.
	Host string
	// AckWait is how long a result being handled stays the coordinator's
	// before it is delivered again, DefaultAckWait if zero; an event batch
	// stays it no longer than 5 s (EventsOf).
	AckWait time.Duration
	// Logger, when set, is told what went wrong, from any goroutine: a
	// sentence naming the task, attempt and worker, with the same as
	// attributes (task, run, attempt, worker).
	Logger *slog.Logger
}

// Coordinator is the autopilot's Runner when its slots are workers: it
// sends each task's loop to the workers as a Task and waits for its Result,
// and keeps a copy of the loop's events beside the autopilot's files.
//
// What it knows is on disk under .ralph/tasks/<task-id>/ before it is
// acknowledged to the servers, so a coordinator killed at any moment picks
// up where it was: the task it sent (dispatch-<run>-<attempt>.json, written
// before the task is published, so it is published again, as the same
// message, after a restart), the result (result-<run>-<attempt>.json), the
// loop's events (events.jsonl) and the worker that runs it (worker.json).
type Coordinator struct {
	opts CoordinatorOptions

	mu      sync.Mutex
	waiting map[string]*remoteLoop // by message id
	workers map[string]string      // task → the worker its events came from last
	// copied is closed, and replaced, whenever a batch is copied.
	copied chan struct{}
}

// NewCoordinator checks opts.
func NewCoordinator(opts CoordinatorOptions) (*Coordinator, error) {
	var errs []error
	if opts.JetStream == nil {
		errs = append(errs, errors.New("no JetStream"))
	}
	if opts.Repo == "" {
		errs = append(errs, errors.New("no repository"))
	}
	if opts.RemoteURL == "" {
		errs = append(errs, errors.New("no shared remote: set autopilot.cluster.remote to a git remote the workers can reach"))
	}
	if opts.Host == "" {
		errs = append(errs, errors.New("no host name"))
	}
	if opts.Signer == nil {
		errs = append(errs, errors.New("no key to sign tasks with"))
	}
	if opts.Trust.Len() == 0 {
		errs = append(errs, errors.New("no trusted worker key: results are taken only from workers the coordinator trusts"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	opts.Logger = orDiscard(opts.Logger)
	return &Coordinator{opts: opts, waiting: map[string]*remoteLoop{}, workers: map[string]string{}, copied: make(chan struct{})}, nil
}

func (c *Coordinator) logf(level slog.Level, attrs []any, format string, v ...any) {
	logAt(c.opts.Logger, level, attrs, format, v...)
}

// Serve takes results and event batches from the workers until ctx ends,
// and returns ctx's error; or, when one of its consumers fails, stops the
// other and returns that failure.
func (c *Coordinator) Serve(ctx context.Context) error {
	copts := ConsumeOptions{AckWait: c.opts.AckWait, Trust: c.opts.Trust, Invalid: func(subject string, err error) {
		c.logf(slog.LevelWarn, []any{attrSubject, subject}, "dropped a message on %s: %v", subject, err)
	}}
	// Either consumer ending ends the other, with an error or without.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(cctx)
	g.Go(func() error { defer cancel(); return Results(gctx, c.opts.JetStream, copts, c.handleResult) })
	g.Go(func() error { defer cancel(); return EventsOf(gctx, c.opts.JetStream, copts, c.handleEvents) })
	err := g.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// ralphDir is the repository's .ralph/, where the coordinator keeps its
// files.
func (c *Coordinator) ralphDir() string { return runfiles.In(c.opts.Repo).Path() }

func (c *Coordinator) dispatchFile(run, task string, attempt int) string {
	return runfiles.In(c.opts.Repo).Dispatch(task, run, attempt)
}

func (c *Coordinator) resultFile(run, task string, attempt int) string {
	return runfiles.In(c.opts.Repo).Result(task, run, attempt)
}

// dispatch is a task the coordinator sends: recorded before it is pushed
// and published, so that a restart sends the same message again.
type dispatch struct {
	Task Task `json:"task"`
	// Pushed says the task's start is on the shared remote.
	Pushed bool `json:"pushed"`
}

// Start sends job's loop to the workers, unless it was sent before (the
// same message is then published again, which the servers store once),
// and returns a handle that waits for its result; one already received
// ends it at once.
//
// The task is made, recorded and sent in a goroutine of its own: its
// start commit in the task's worktree and the record are several git
// processes and an fsync, which would otherwise hold the autopilot's one
// goroutine, and every other task's start and merge, for each task. The
// worktree is the task's alone until its handle ends, and a failure ends
// the handle as a failed loop, which fails the task.
func (c *Coordinator) Start(ctx context.Context, job autopilot.Job) (autopilot.Handle, error) {
	h := c.register(job)
	if r, ok, err := readJSON[Result](c.resultFile(job.Run, job.Task, job.Attempt)); err != nil {
		c.unregister(h)
		return nil, err
	} else if ok {
		h.deliver(r)
		return h, nil
	}
	go h.send(ctx)
	return h, nil
}

// Where says that the coordinator's loops run on its workers.
func (c *Coordinator) Where() string { return "a worker" }

// Attach is never needed: a remote loop holds no lock here, so a restarted
// autopilot starts it again, which finds what was sent.
func (c *Coordinator) Attach(context.Context, string) (autopilot.Handle, error) {
	return nil, errors.New("a task on a worker is not attached to; it is started again")
}

// prepare makes, or reads back, the task that carries job.
func (c *Coordinator) prepare(ctx context.Context, job autopilot.Job) (dispatch, error) {
	path := c.dispatchFile(job.Run, job.Task, job.Attempt)
	d, ok, err := readJSON[dispatch](path)
	if err != nil || ok {
		return d, err
	}
	t, err := c.task(ctx, job)
	if err != nil {
		return d, err
	}
	d = dispatch{Task: t}
	return d, writeJSON(c.ralphDir(), path, d)
}

// task is the message for job: its objective, its config files, and its
// start, which is what the task's worktree here has committed.
func (c *Coordinator) task(ctx context.Context, job autopilot.Job) (Task, error) {
	objective, err := os.ReadFile(job.ObjectiveFile)
	if err != nil {
		return Task{}, fmt.Errorf("read the objective of %s: %w", job.Task, err)
	}
	t := Task{Run: job.Run, ID: job.Task, Attempt: job.Attempt, Objective: string(objective),
		RepoURL: c.opts.RemoteURL, Coordinator: c.opts.Host, Workers: c.opts.Trust.Keys(),
		Backend: job.Agent.Backend, Model: job.Agent.Model}
	for _, path := range job.Configs {
		data, err := os.ReadFile(path)
		if err != nil {
			return Task{}, fmt.Errorf("read config %s: %w", path, err)
		}
		t.Configs = append(t.Configs, ConfigFile{Name: filepath.Base(path), Data: data})
	}
	for _, s := range job.TaskCommands {
		t.TaskCommands = append(t.TaskCommands, TaskCommand{Name: s.Name, Command: s.Command})
	}
	if info, err := os.Stat(runfiles.In(c.opts.Repo).RemoteEvents(job.Task)); err == nil {
		t.EventsOffset = info.Size()
	}
	if t.BaseCommit, t.MergeCommit, err = start(ctx, job); err != nil {
		return Task{}, err
	}
	return t, nil
}

// start is where job's loop starts: the commit its worktree here has,
// and the commit a retry after a conflict merges into it. The retry left
// that merge in progress here, for the loop to resolve; it travels as the
// commit to merge, and the worker makes the merge again, so that nobody
// commits its conflict markers.
func start(ctx context.Context, job autopilot.Job) (base, merge string, err error) {
	if head, ok := settledStart(ctx, job); ok {
		return head, "", nil
	}
	wt := git.Repo{Dir: job.Dir}
	if merge, err = wt.Resolve(ctx, "MERGE_HEAD"); err == nil {
		if err := wt.AbortMerge(ctx); err != nil {
			return "", "", fmt.Errorf("the start of %s: %w", job.Task, err)
		}
	}
	if unresolved, err := wt.UnresolvedChanges(ctx); err != nil || len(unresolved) > 0 {
		return "", "", errors.Join(err, fmt.Errorf("the start of %s holds conflict markers: %s", job.Task, strings.Join(unresolved, ", ")))
	}
	if _, err := wt.CommitAll(ctx, "ralph: the start of "+job.Task+"'s attempt "+strconv.Itoa(job.Attempt)); err != nil {
		return "", "", fmt.Errorf("commit the start of %s: %w", job.Task, err)
	}
	base, err = wt.Head(ctx)
	return base, merge, err
}

// settledStart is the start of job's loop when its worktree has nothing
// to commit and no merge under way, as a task's new worktree has: its
// HEAD, found with two git processes, where what start checks and commits
// takes seven. ok is false when the worktree needs those.
func settledStart(ctx context.Context, job autopilot.Job) (head string, ok bool) {
	if job.Pin.IsZero() {
		return "", false
	}
	if _, err := os.Lstat(filepath.Join(job.Pin.GitDir, "MERGE_HEAD")); !errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	wt := git.Repo{Dir: job.Dir}
	if dirty, err := wt.Dirty(ctx); err != nil || len(dirty) > 0 {
		return "", false
	}
	head, err := wt.Head(ctx)
	return head, err == nil && head != ""
}

func (c *Coordinator) register(job autopilot.Job) *remoteLoop {
	h := &remoteLoop{c: c, job: job, key: msgID(job.Run, job.Task, job.Attempt),
		ended: make(chan autopilot.LoopResult, 1), interrupted: make(chan struct{})}
	c.mu.Lock()
	c.waiting[h.key] = h
	c.mu.Unlock()
	return h
}

func (c *Coordinator) unregister(h *remoteLoop) {
	c.mu.Lock()
	if c.waiting[h.key] == h {
		delete(c.waiting, h.key)
	}
	c.mu.Unlock()
}

// handleResult keeps a worker's result, and the work it names, before the
// result is acknowledged, and hands it to the loop waiting for it.
func (c *Coordinator) handleResult(ctx context.Context, r Result) error {
	if sent, err := c.sent(r.Run, r.TaskID, r.Attempt); err != nil || !sent {
		if err == nil {
			c.logf(slog.LevelWarn, []any{attrTask, r.TaskID, attrRun, r.Run, attrAttempt, r.Attempt, attrWorker, r.Worker}, "dropped a result of task %s (run %s, attempt %d) from worker %s: this coordinator never sent that task", r.TaskID, r.Run, r.Attempt, r.Worker)
		}
		return err
	}
	if r.Refused {
		c.logf(slog.LevelWarn, []any{attrTask, r.TaskID, attrRun, r.Run, attrAttempt, r.Attempt, attrWorker, r.Worker}, "task %s: worker %s will not run it (delivery %d): %s; it goes back to the queue for another worker",
			r.TaskID, r.Worker, r.Delivery, r.Message)
		return nil
	}
	if first, ok, err := readJSON[Result](c.resultFile(r.Run, r.TaskID, r.Attempt)); err != nil || ok && first != r {
		// A worker ran the attempt again after another published its
		// result (and died before it was acknowledged): the first counts.
		if err == nil {
			c.logf(slog.LevelWarn, []any{attrTask, r.TaskID, attrRun, r.Run, attrAttempt, r.Attempt, attrWorker, r.Worker}, "task %s: a second result of attempt %d, from worker %s, is dropped; the first, from %s, counts",
				r.TaskID, r.Attempt, r.Worker, first.Worker)
		}
		return err
	}
	c.awaitEvents(ctx, r.TaskID)
	if r.Head != "" {
		if err := c.fetchResult(ctx, r); err != nil {
			return err
		}
	}
	if err := writeJSON(c.ralphDir(), c.resultFile(r.Run, r.TaskID, r.Attempt), r); err != nil {
		return err
	}
	if err := c.noteWorker(r.TaskID, r.Worker, r.Run, r.Attempt); err != nil {
		return err
	}
	c.mu.Lock()
	h := c.waiting[msgID(r.Run, r.TaskID, r.Attempt)]
	c.mu.Unlock()
	if h != nil {
		h.deliver(r)
	}
	return nil
}

// sent reports whether this coordinator sent the attempt: a result or an
// event batch of any other (from a worker that ran a task someone else
// signed) has no place in the repository's files.
func (c *Coordinator) sent(run, task string, attempt int) (bool, error) {
	_, err := os.Stat(c.dispatchFile(run, task, attempt))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// eventsWait bounds how long a result waits for its loop's last events.
const eventsWait = 30 * time.Second

// awaitEvents waits until the copy of task's events holds every batch the
// stream has of it: a worker sends its loop's last lines before its
// result, and a task taken as done has its events complete here.
func (c *Coordinator) awaitEvents(ctx context.Context, task string) {
	end, err := c.eventsEnd(ctx, task)
	if err != nil {
		c.logf(slog.LevelWarn, []any{attrTask, task}, "task %s: the end of its events: %v", task, err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, eventsWait)
	defer cancel()
	for {
		c.mu.Lock()
		copied := c.copied
		c.mu.Unlock()
		info, err := os.Stat(runfiles.In(c.opts.Repo).RemoteEvents(task))
		if end == 0 || err == nil && info.Size() >= end {
			return
		}
		select {
		case <-copied:
		case <-ctx.Done():
			c.logf(slog.LevelWarn, []any{attrTask, task}, "task %s: its result came before the last of its events, which are still missing", task)
			return
		}
	}
}

// eventsEnd is where the last batch of task's events in the stream ends.
func (c *Coordinator) eventsEnd(ctx context.Context, task string) (int64, error) {
	s, err := c.opts.JetStream.Stream(ctx, EventsStream)
	if err != nil {
		return 0, err
	}
	msg, err := s.GetLastMsgForSubject(ctx, EventsSubject(task))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var e Events
	if _, err := c.opts.Trust.verify(msg.Subject, msg.Data, msg.Header); err != nil {
		return 0, nil //nolint:nilerr // not a trusted worker's: nothing to wait for
	}
	if err := json.Unmarshal(msg.Data, &e); err != nil {
		return 0, nil //nolint:nilerr // not a batch: nothing to wait for
	}
	return e.Offset + int64(len(e.Lines)), nil
}

// fetchResult fetches the branch r names into refs/ralph/results/<id>.
// A head the remote no longer has (a later attempt replaced the branch)
// turns r into a failure that says so.
func (c *Coordinator) fetchResult(ctx context.Context, r Result) error {
	repo := git.Repo{Dir: c.opts.Repo}
	ref := "refs/ralph/results/" + r.TaskID
	if _, err := repo.Resolve(ctx, r.Head+"^{commit}"); err == nil {
		return nil
	}
	if err := repo.Fetch(ctx, c.opts.RemoteURL, "+refs/heads/"+r.Branch+":"+ref); err != nil {
		return fmt.Errorf("fetch %s of %s from %s: %w", r.Branch, r.TaskID, c.opts.RemoteURL, err)
	}
	return nil
}

// handleEvents appends a batch to the task's copy of its loop's events
// when the copy ends where the batch starts; a batch it already has is
// skipped, and one that would leave a gap is refused, to come again after
// the batches before it.
func (c *Coordinator) handleEvents(_ context.Context, e Events) error {
	if sent, err := c.sent(e.Run, e.TaskID, e.Attempt); err != nil || !sent {
		if err == nil {
			c.logf(slog.LevelWarn, []any{attrTask, e.TaskID, attrRun, e.Run, attrAttempt, e.Attempt, attrWorker, e.Worker}, "dropped an event batch of task %s (run %s, attempt %d) from worker %s: this coordinator never sent that task", e.TaskID, e.Run, e.Attempt, e.Worker)
		}
		return err
	}
	path := runfiles.In(c.opts.Repo).RemoteEvents(e.TaskID)
	f, err := ralphdir.OpenFile(c.ralphDir(), path, os.O_CREATE|os.O_WRONLY, ralphdir.FileMode)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	size, end := info.Size(), e.Offset+int64(len(e.Lines))
	switch {
	case end <= size:
		return nil
	case e.Offset > size:
		return fmt.Errorf("the events of %s from offset %d come before those from %d", e.TaskID, size, e.Offset)
	case e.Offset < size && e.Lines[size-e.Offset-1] != '\n':
		// Batches cut elsewhere, by two workers running the task at once:
		// the one whose lines are here already wins.
		c.logf(slog.LevelWarn, []any{attrTask, e.TaskID, attrRun, e.Run, attrAttempt, e.Attempt, attrWorker, e.Worker}, "task %s: an event batch from %s overlaps lines already copied; skipped", e.TaskID, e.Worker)
		return nil
	}
	if _, err := f.WriteAt(e.Lines[size-e.Offset:], size); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	c.mu.Lock()
	close(c.copied)
	c.copied = make(chan struct{})
	c.mu.Unlock()
	return c.noteWorker(e.TaskID, e.Worker, e.Run, e.Attempt)
}

// noteWorker records which worker runs task, when that changed.
func (c *Coordinator) noteWorker(task, worker, run string, attempt int) error {
	c.mu.Lock()
	same := c.workers[task] == worker+"/"+run+"/"+strconv.Itoa(attempt)
	c.workers[task] = worker + "/" + run + "/" + strconv.Itoa(attempt)
	c.mu.Unlock()
	if same {
		return nil
	}
	return runfiles.WriteWorkerInfo(c.opts.Repo, task, runfiles.WorkerInfo{Worker: worker, Run: run, Attempt: attempt, Since: time.Now().UTC()})
}

// CleanUp deletes a done task's refs on the shared remote and here; its
// branch there stays when keepBranch says it is an open pull request's.
func (c *Coordinator) CleanUp(ctx context.Context, task string, keepBranch bool) error {
	repo := git.Repo{Dir: c.opts.Repo}
	refs := []string{WIPRef(task), MergeRef(task)}
	if !keepBranch {
		refs = append(refs, "refs/heads/"+TaskBranch(task))
	}
	if err := deleteRemoteRefs(ctx, repo, c.opts.RemoteURL, refs); err != nil {
		return err
	}
	// Deleting a ref that is not there is no error (none was fetched).
	return repo.DeleteRef(ctx, "refs/ralph/results/"+task)
}

// deleteRemoteRefs deletes refs (full names) on the remote at url, in one
// push: git's receive-pack only warns of a ref it does not have, so the
// remote need not be asked which it has first. A remote that refuses
// such a deletion is asked, and only those it has are deleted.
func deleteRemoteRefs(ctx context.Context, repo git.Repo, url string, refs []string) error {
	specs := make([]string, len(refs))
	for i, ref := range refs {
		specs[i] = ":" + ref
	}
	if err := repo.Push(ctx, url, specs...); err == nil || ctx.Err() != nil {
		return err
	}
	return repo.DeleteRemoteRefs(ctx, url, refs...)
}

// remoteLoop is a task's loop on a worker, as the autopilot waits for it.
type remoteLoop struct {
	c           *Coordinator
	job         autopilot.Job
	key         string
	ended       chan autopilot.LoopResult
	interrupted chan struct{}
	once        sync.Once
}

func (h *remoteLoop) PID() int { return 0 }

// send makes the task, or reads back the one recorded, pushes its start
// to the shared remote and publishes it, trying until it is stored or the
// autopilot stops. The task is made whole under ctx, which an interrupt
// does not end: a git commit cut off in the task's worktree would leave
// its index locked.
func (h *remoteLoop) send(ctx context.Context) {
	d, err := h.c.prepare(ctx, h.job)
	if err != nil {
		h.fail(ctx, "making its task failed: "+err.Error())
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-h.interrupted:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := d.Task
	if !d.Pushed {
		wt := git.Repo{Dir: h.job.Dir}
		refs := []string{"+" + t.BaseCommit + ":" + WIPRef(t.ID)}
		if t.MergeCommit != "" {
			refs = append(refs, "+"+t.MergeCommit+":"+MergeRef(t.ID))
		}
		if err := wt.Push(ctx, t.RepoURL, refs...); err != nil {
			h.fail(ctx, fmt.Sprintf("pushing its start to %s failed: %v", t.RepoURL, err))
			return
		}
		d.Pushed = true
		if err := writeJSON(h.c.ralphDir(), h.c.dispatchFile(t.Run, t.ID, t.Attempt), d); err != nil {
			h.fail(ctx, err.Error())
			return
		}
	}
	if err := PublishTask(ctx, h.c.opts.JetStream, h.c.opts.Signer, t); err != nil {
		h.fail(ctx, "sending it to the workers failed: "+err.Error())
	}
}

// fail ends the loop as failed, unless the autopilot stopped waiting.
func (h *remoteLoop) fail(ctx context.Context, msg string) {
	if ctx.Err() != nil {
		return
	}
	h.end(autopilot.LoopResult{ExitCode: exitcode.Fatal, Message: msg})
}

func (h *remoteLoop) deliver(r Result) {
	h.end(h.c.land(h.job, r))
}

func (h *remoteLoop) end(res autopilot.LoopResult) {
	select {
	case h.ended <- res:
	default:
	}
}

// Wait blocks until the worker's result arrives, or the autopilot stops
// waiting; the task then goes on on the workers, and its result waits in
// the streams for the autopilot's next run.
func (h *remoteLoop) Wait() autopilot.LoopResult {
	defer h.c.unregister(h)
	select {
	case res := <-h.ended:
		return res
	case <-h.interrupted:
		return autopilot.LoopResult{ExitCode: exitcode.Interrupted, Reason: "interrupted",
			Message: "the autopilot stopped waiting; the task goes on on the workers"}
	}
}

func (h *remoteLoop) Interrupt() { h.once.Do(func() { close(h.interrupted) }) }

// landTimeout bounds bringing a worker's work into the task's worktree (a
// git reset of its files).
const landTimeout = 5 * time.Minute

// land brings a worker's work into the task's worktree here, where the
// merge queue takes its branch from, and says how the loop ended.
func (c *Coordinator) land(job autopilot.Job, r Result) autopilot.LoopResult {
	res := autopilot.LoopResult{ExitCode: r.ExitCode, Reason: r.Reason, Message: r.Message, Cost: r.Cost}
	if res.ExitCode >= 128 {
		// Killed on the worker: not a loop this autopilot can resume.
		res.ExitCode = exitcode.Fatal
		res.Message = fmt.Sprintf("the loop was killed (exit %d)%s", r.ExitCode, prefixed(": ", r.Message))
	}
	if !res.Completed() {
		res.Message += " (on worker " + r.Worker + ")"
	}
	if r.Head != "" {
		// Not the autopilot's context: a result, once received, is landed
		// whole. Bounded, as a git that hangs must not hold the run.
		ctx, cancel := context.WithTimeout(context.Background(), landTimeout)
		defer cancel()
		if err := (git.Repo{Dir: job.Dir}).ResetHard(ctx, r.Head); err != nil {
			return autopilot.LoopResult{ExitCode: exitcode.Fatal,
				Message: fmt.Sprintf("taking the work of worker %s (%s) failed: %v", r.Worker, r.Head, err)}
		}
	}
	return res
}

// readJSON reads a JSON file; ok is false when there is none.
func readJSON[T any](path string) (v T, ok bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return v, false, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &v)
	}
	if err != nil {
		return v, false, fmt.Errorf("read %s: %w", path, err)
	}
	return v, true, nil
}

// writeJSON replaces path, a file under root, a directory of ralph's own
// (the repository's .ralph, a worker's ran/), with v, atomically and
// durably, never through a link, for the user alone.
func writeJSON(root, path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return ralphdir.WriteFileAtomic(root, path, append(data, '\n'))
}
