package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// What the engine keeps so that `ralph inspect` can show, after the fact,
// what each iteration's agent was told and what it changed: the prompt, in
// the run's directory beside the raw output, and the workspace's trees
// before and after, in iteration.finished.

// keptPrompt is what iteration.started records of the prompt it kept.
type keptPrompt struct {
	attempt int
	file    string
	bytes   int
	sha256  string
}

// keepPrompt writes iteration n's prompt, with secret values hidden, to
// the run's directory (writeNew). The attempt is the first whose prompt and raw
// output are both absent, so a repeated iteration keeps every attempt's
// prompt and a prompt written just before a crash is not overwritten.
func (e *Engine) keepPrompt(n int, prompt string) (keptPrompt, error) {
	dir := e.files().Run(e.st.RunID)
	if err := ralphdir.MkdirAll(e.dir, dir); err != nil {
		return keptPrompt{}, storageError(OpPrompt, dir, err)
	}
	attempt := nextAttempt(dir, n)
	text := []byte(e.opts.Redactor.String(prompt))
	path := filepath.Join(dir, runfiles.Prompt(n, attempt))
	err := e.writeFault(FilePrompt)
	if err == nil {
		err = e.writeNew(path, text)
	}
	if err != nil {
		return keptPrompt{}, storageError(OpPrompt, path, err)
	}
	sum := sha256.Sum256(text)
	return keptPrompt{attempt: attempt, file: filepath.Base(path), bytes: len(text), sha256: hex.EncodeToString(sum[:])}, nil
}

// writeNew writes a new file at path, under .ralph/, so that a process
// killed at any instant leaves the whole file or none: the data goes to a
// temporary file beside it (never opened through a link), renamed into
// place. Unlike the checkpoint it is not flushed to the disk first: the
// prompt is a record for people, not state a resume reads, and a flush per
// iteration would double the run's fsyncs. A power cut may leave it short,
// which its size and hash in iteration.started reveal.
func (e *Engine) writeNew(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+strconv.Itoa(os.Getpid()))
	_ = os.Remove(tmp) // a leftover of a ralph with the same pid, killed here
	f, err := ralphdir.OpenFile(e.dir, tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, ralphdir.FileMode)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

func nextAttempt(dir string, n int) int {
	for attempt := 1; ; attempt++ {
		if !exists(filepath.Join(dir, runfiles.Prompt(n, attempt))) &&
			!exists(filepath.Join(dir, runfiles.RawOutput(n, attempt))) {
			return attempt
		}
	}
}

// exists says whether there is anything at path, a link included.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return !os.IsNotExist(err)
}

// TreeRecorder is what the engine needs of a Repo, when it has it, to
// record what an iteration changed: the tree of the workspace's files as
// they are, written without touching the user's index ("" outside a
// repository).
type TreeRecorder interface {
	WorkTree(ctx context.Context, index string) (string, error)
}

// trees is what iteration.finished records of the workspace before and
// after the iteration. Outside a repository, or once ralph runs no more
// git in it (gitguard.go), it says why there is nothing.
func (e *Engine) trees(ctx context.Context, it *iteration, after Snapshot) *runfiles.TreesRecord {
	if _, ok := e.opts.Repo.(TreeRecorder); !ok {
		return nil
	}
	if e.gitArmed != nil {
		return &runfiles.TreesRecord{Unavailable: "ralph stopped running git in the workspace: " + e.gitArmed.Error()}
	}
	treeAfter, err := e.workTree(ctx, after)
	if err == nil {
		err = it.treeErr
	}
	switch {
	case err != nil:
		return &runfiles.TreesRecord{HeadBefore: it.before.Head, HeadAfter: after.Head, Unavailable: err.Error()}
	case treeAfter == "" || it.treeBefore == "":
		return &runfiles.TreesRecord{Unavailable: "the workspace is not in a git repository"}
	}
	return &runfiles.TreesRecord{HeadBefore: it.before.Head, HeadAfter: after.Head, Before: it.treeBefore, After: treeAfter}
}

// workTree is the tree of the workspace as the look s saw it, written
// with the run's own index (runfiles.TreeIndex). Only the last tree is
// remembered, with its look's fingerprint: an iteration's before is then
// the last one's after, unless something (a check's command) changed the
// files in between, so an iteration usually costs one tree, its after.
func (e *Engine) workTree(ctx context.Context, s Snapshot) (string, error) {
	rec, ok := e.opts.Repo.(TreeRecorder)
	if !ok || e.gitArmed != nil {
		return "", nil
	}
	if s.Fingerprint != "" && s.Fingerprint == e.lastTree.fingerprint {
		return e.lastTree.tree, nil
	}
	index := filepath.Join(e.files().Run(e.st.RunID), runfiles.TreeIndex)
	if err := ralphdir.CheckPath(e.dir, filepath.Dir(index)); err != nil {
		return "", err
	}
	if err := ralphdir.NotLink(index); err != nil {
		return "", err
	}
	tree, err := rec.WorkTree(ctx, index)
	if err != nil {
		return "", err
	}
	e.lastTree.fingerprint, e.lastTree.tree = s.Fingerprint, tree
	return tree, nil
}

// lastTree is the last tree workTree wrote and the fingerprint of the
// look it was written for.
type lastTree struct{ fingerprint, tree string }

// recorded is the attempt as iteration.started records it: absent for the
// first.
func (k keptPrompt) recorded() int {
	if k.attempt > 1 {
		return k.attempt
	}
	return 0
}

// workspaceRel is file, one of the run's, relative to the workspace, with
// forward slashes as people and scripts write it.
func (e *Engine) workspaceRel(file string) string {
	if file == "" {
		return ""
	}
	return filepath.ToSlash(filepath.Join(e.files().Rel(), runfiles.RunsDir, e.st.RunID, file))
}
