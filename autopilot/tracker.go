package autopilot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/tasks"
)

// redactedSource is a tracker that is told nothing secret: the reason of a
// close or a failure (a verify command's output, a loop's last words) has
// its secret values hidden before the tracker keeps it in a note, which
// ralph commits, or hands it to a command as RALPH_TASK_REASON.
type redactedSource struct {
	tasks.Source
	r *redact.Redactor
}

// redactSource is source, told nothing secret when r has secrets to hide.
func redactSource(source tasks.Source, r *redact.Redactor) tasks.Source {
	if r.Empty() {
		return source
	}
	return &redactedSource{Source: source, r: r}
}

func (s *redactedSource) Close(ctx context.Context, id, reason string) error {
	return s.Source.Close(ctx, id, s.r.String(reason))
}

func (s *redactedSource) Fail(ctx context.Context, id, reason string) error {
	return s.Source.Fail(ctx, id, s.r.String(reason))
}

func (s *redactedSource) Remote() bool {
	r, ok := s.Source.(tasks.Remote)
	return ok && r.Remote()
}

// claim claims task in the tracker and commits what that changed in the
// tracker's files. A claim the tracker refuses fails the task (claimed is
// false). Many trackers change nothing to claim (a checklist's box has no
// state between open and done): when the tracker's files look as they did
// before, nothing is committed, and no git process runs to find that out.
// Should a change hide from the look (a file rewritten at its size within
// the file system's time granularity), it is not lost: the next commit of
// the tracker's files takes it, and a run commits what it finds left at
// its start.
func (a *Autopilot) claim(ctx context.Context, task, title string) (claimed bool, err error) {
	_, watched := a.opts.Source.(*watchedSource)
	files := a.opts.Source.Files()
	before := stampFiles(a.opts.Repo, files)
	if err := a.opts.Source.Claim(ctx, task); err != nil {
		return false, a.failAssign(ctx, task, title, "claiming it in "+a.opts.Source.Name()+" failed: "+err.Error())
	}
	if !watched && len(files) > 0 && stampFiles(a.opts.Repo, files) == before {
		return true, nil
	}
	return true, a.commitTracker(ctx, "ralph: claim "+task)
}

// stampFiles is what the files and directories at paths (relative to
// root) look like from their metadata: each one's path, size, mode and
// modification time. Two equal stamps say nothing changed.
func stampFiles(root string, paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		_ = filepath.WalkDir(filepath.Join(root, filepath.FromSlash(p)), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				fmt.Fprintf(&b, "%s: %v\n", path, err)
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				fmt.Fprintf(&b, "%s: %v\n", path, err)
				return nil
			}
			fmt.Fprintf(&b, "%s %d %v %d\n", path, fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
			return nil
		})
	}
	return b.String()
}

// watchedSource is a tracker that cannot name the files it keeps in the
// repository (a command source without files:), so ralph learns them: it
// looks at the checkout's git status before and after each claim, close
// and fail, and the paths the command changed are what commitTracker
// commits next. Only the autopilot's own goroutine calls these, and ralph
// writes nothing else to the checkout meanwhile (loops and merges work in
// worktrees of their own), so what changed is the command's doing.
type watchedSource struct {
	tasks.Source
	repo git.Repo
	// changed are the paths the commands changed that are not committed
	// yet.
	changed map[string]bool
}

// watchSource is source, watched when it cannot name its files.
func watchSource(source tasks.Source, repo git.Repo) tasks.Source {
	if r, ok := source.(tasks.Remote); len(source.Files()) > 0 || ok && r.Remote() {
		return source
	}
	return &watchedSource{Source: source, repo: repo, changed: map[string]bool{}}
}

func (s *watchedSource) Claim(ctx context.Context, id string) error {
	return s.watch(ctx, func() error { return s.Source.Claim(ctx, id) })
}

func (s *watchedSource) Close(ctx context.Context, id, reason string) error {
	return s.watch(ctx, func() error { return s.Source.Close(ctx, id, reason) })
}

func (s *watchedSource) Fail(ctx context.Context, id, reason string) error {
	return s.watch(ctx, func() error { return s.Source.Fail(ctx, id, reason) })
}

// watch runs one of the tracker's commands and notes the paths it left
// changed, whether or not it succeeded: a command that failed half-way
// may have written files too.
func (s *watchedSource) watch(ctx context.Context, command func() error) error {
	before, err := s.repo.UncommittedContent(ctx)
	if err != nil {
		return fmt.Errorf("look at the checkout before the tracker's command: %w", err)
	}
	cmdErr := command()
	after, err := s.repo.UncommittedContent(ctx)
	if err != nil {
		return errors.Join(cmdErr, fmt.Errorf("look at the checkout after the tracker's command: %w", err))
	}
	for _, p := range after.ChangedSince(before) {
		// A path gone from the status is as HEAD has it: nothing to
		// commit.
		if _, ok := after[p]; ok {
			s.changed[p] = true
		}
	}
	return cmdErr
}

// pending are the paths to commit, sorted.
func (s *watchedSource) pending() []string { return slices.Sorted(maps.Keys(s.changed)) }

// committed forgets the paths pending returned, now committed.
func (s *watchedSource) committed() { clear(s.changed) }
