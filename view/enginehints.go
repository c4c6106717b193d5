package view

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/runfiles"
)

// HintOf is how the user can fix err, the one lookup every front-end
// uses: the fix it carries (hint.Of), else the advice on the engine's
// error it wraps, else "".
func HintOf(err error) string {
	if h := hint.Of(err); h != "" {
		return h
	}
	return EngineHint(err)
}

// StepHintOf is HintOf for the loop of a chain's step, whose run goes on
// with its chain's resume, never its own.
func StepHintOf(err error) string {
	if h := hint.Of(err); h != "" {
		return h
	}
	return engineHint(err, runfiles.ModeChainStep)
}

// EngineHint says what a user can do about an error of the engine's, ""
// when it has no advice. The engine's errors carry the facts (the holder
// of the lock, the file, the errno); which command to type is for the
// views to say, here in one place for all of them.
func EngineHint(err error) string { return engineHint(err, runfiles.ModeLoop) }

// engineHint is EngineHint for a loop of mode, which says which command
// resumes it.
func engineHint(err error, mode string) string {
	resume := resumeCmd(mode == runfiles.ModeChainStep)
	var (
		lock       *runfiles.LockHeldError
		storage    *engine.StorageError
		noRun      *engine.NoRunError
		unfinished *engine.UnfinishedRunError
		auth       *engine.AgentAuthError
		armed      *engine.GitArmedError
		unknownRun *runfiles.UnknownRunError
		ambiguous  *runfiles.AmbiguousRunError
		logPath    *runfiles.LogPathError
		notRunning *runfiles.NotRunningError
		notPending *runfiles.NotPendingError
		question   *runfiles.QuestionError
	)
	switch {
	case errors.As(err, &lock):
		return lockHint(lock)
	case errors.As(err, &storage):
		return storageHint(storage, resume)
	case errors.As(err, &noRun):
		return "start a new run with `ralph loop`"
	case errors.As(err, &unfinished):
		return ResumeHint(mode)
	case errors.As(err, &auth):
		return "log in with the " + auth.Backend + " CLI or set its API key, check with `ralph doctor`, then `" + resume + "`"
	case errors.As(err, &armed):
		return gitArmedStep(resume)
	case errors.As(err, &unknownRun):
		return "`ralph events --runs` lists the runs of this workspace"
	case errors.As(err, &ambiguous):
		return "give more of the run id"
	case errors.As(err, &notRunning):
		return notRunningHint(notRunning)
	case errors.As(err, &notPending):
		return notPendingHint(notPending)
	case errors.As(err, &question):
		return questionHint(question)
	case errors.As(err, &logPath):
		return fmt.Sprintf("remove %s: ralph writes it when a run starts, and without it the newest %s is the current log; "+
			"a repository that brings it has ralph's files committed (%s keeps them out of git)",
			logPath.File, filepath.Join(runfiles.DirName, runfiles.EventLogName("*", 0)), filepath.Join(runfiles.DirName, runfiles.IgnoreFile))
	}
	return ""
}

func notRunningHint(e *runfiles.NotRunningError) string {
	if e.What == "autopilot" {
		return "`ralph autopilot status` shows how the last one ended"
	}
	return "`ralph status` shows how the last run ended"
}

// notPendingHint says what can be answered.
func notPendingHint(e *runfiles.NotPendingError) string {
	if e.Pending != nil {
		return fmt.Sprintf("answer the pending question with `ralph answer %s \"TEXT\"` (it asks: %s)", e.Pending.ID, e.Pending.Text)
	}
	return "a question waits once the iteration that asked it has ended; `ralph status` shows waiting_for_human"
}

func questionHint(e *runfiles.QuestionError) string {
	switch e.What {
	case "question":
		return `ask something a person can answer, e.g. ralph ask "Keep the old API?"`
	case "timeout":
		return "give a wait such as 30m, or leave it out"
	case "answer":
		return `say what the agent should do, e.g. ralph answer "keep the old API"`
	}
	return ""
}

func lockHint(e *runfiles.LockHeldError) string {
	switch {
	case e.HolderGone && len(e.Holders) > 0:
		return fmt.Sprintf("a process started by the dead ralph may still have the lock file open; stop it (kill %d) and run again", e.Holders[0].PID)
	case e.HolderGone:
		return fmt.Sprintf("find what has it open with `fuser -v %s` or `lsof %s`, stop it, and run again", e.Path, e.Path)
	case filepath.Base(e.Path) == runfiles.AutopilotLockFile:
		// The autopilot's own lock: the loop's commands would not reach it.
		return "see it with `ralph autopilot status`, stop it with `ralph autopilot stop` (or `ralph autopilot stop --now`)"
	case e.Holder.PID == 0:
		return "wait for it to finish (ralph loop --wait), or stop it with `ralph stop`"
	}
	return fmt.Sprintf("wait for it to finish (ralph loop --wait), or stop it with `ralph stop` or `kill %d`", e.Holder.PID)
}

// storageHint says what to do about a file ralph could not write, by
// cause; resumeCmd goes on with the run.
func storageHint(e *engine.StorageError, resumeCmd string) string {
	dir := ralphDirOf(e.Path)
	resume := "then continue the run with `" + resumeCmd + "`; nothing written before this is lost"
	var errno syscall.Errno
	errors.As(e.Err, &errno)
	switch errno {
	case syscall.ENOSPC, syscall.EDQUOT:
		return fmt.Sprintf("free space on the file system that holds %s (see `df -h %s`), %s", dir, dir, resume)
	case syscall.EROFS:
		return fmt.Sprintf("the file system that holds %s is read-only; make it writable, %s", dir, resume)
	case syscall.EFBIG:
		return fmt.Sprintf("the file is larger than the file system or `ulimit -f` allows; raise the limit, %s", resume)
	case syscall.EIO:
		return fmt.Sprintf("the disk reported an I/O error; check it (dmesg, smartctl), %s", resume)
	}
	return "fix the cause, " + resume
}

// ralphDirOf is the .ralph directory path lies in, or path's directory.
func ralphDirOf(path string) string {
	for dir := filepath.Dir(path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if filepath.Base(dir) == runfiles.DirName {
			return dir
		}
	}
	return filepath.Dir(path)
}
