package hooks

import (
	"fmt"
	"time"

	"github.com/ralph-loop/ralph/autopilot"
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/engine"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/runfiles"
)

// The dispatcher is what the engine and the autopilot ask of hooks.
var (
	_ engine.Hooks    = (*Dispatcher)(nil)
	_ autopilot.Hooks = (*Dispatcher)(nil)
)

// FromConfig turns the hooks: section into hooks.
func FromConfig(cs []config.Hook) []Hook {
	out := make([]Hook, len(cs))
	for i, c := range cs {
		out[i] = Hook{Name: c.Name, On: c.On, Run: c.Run, Post: c.Post,
			Timeout: time.Duration(c.TimeoutSeconds) * time.Second, OnError: c.OnError}
	}
	return out
}

// ForLoop is the dispatcher of a loop in workspace, nil when the config
// has no hooks. A hook's answer to a question goes through answer (nil:
// hooks do not answer).
func ForLoop(cfg *config.Config, workspace string, answer func(workspace, id, text, by string) error) engine.Hooks {
	if d := New(Options{Hooks: FromConfig(cfg.Hooks), Workspace: workspace, Answer: answer}); d != nil {
		return d
	}
	return nil
}

// ForAutopilot is the dispatcher of the autopilot in repo, nil when the
// config has no hooks.
func ForAutopilot(cfg *config.Config, repo string) autopilot.Hooks {
	if d := New(Options{Hooks: FromConfig(cfg.Hooks), Workspace: repo}); d != nil {
		return d
	}
	return nil
}

// ralphTopics are the topics of ralph's own lines, a loop's and the
// autopilot's, that a hook may name.
var ralphTopics = []string{
	runfiles.TopicLoopStarted, runfiles.TopicLoopResumed, runfiles.TopicLoopTerminate, runfiles.TopicLoopRepaired,
	runfiles.TopicIterationStarted, runfiles.TopicIterationFinished, runfiles.TopicIterationSettled,
	runfiles.TopicEventRouted, runfiles.TopicEventRejected, runfiles.TopicEventDropped,
	runfiles.TopicCompletionConfirm, runfiles.TopicRateLimited, runfiles.TopicCommit, runfiles.TopicCriteriaBaseline,
	runfiles.TopicCompletionVerified, runfiles.TopicCriteriaIgnored, runfiles.TopicTaskComplete, runfiles.TopicTaskResume,
	runfiles.TopicCompletionRejected, "*.exhausted", "*.blocked", "*.scope_violation",
	runfiles.TopicAutopilotStarted, runfiles.TopicAutopilotPaused, runfiles.TopicAutopilotResumed, runfiles.TopicAutopilotStopping,
	runfiles.TopicAutopilotStopped, runfiles.TopicAutopilotNotice, runfiles.TopicTaskAssigned, runfiles.TopicTaskRunning,
	runfiles.TopicTaskHeld, runfiles.TopicTaskAsked, runfiles.TopicTaskAnswered, runfiles.TopicTaskFinished,
	runfiles.TopicTaskRetry, runfiles.TopicTaskCompleted, runfiles.TopicTaskClosed,
	runfiles.TopicTaskFailed, runfiles.TopicTaskAssignFailed, runfiles.TopicMergeStarted, runfiles.TopicMergeDone, runfiles.TopicMergeFailed,
	runfiles.TopicMergePushed, runfiles.TopicTaskPROpened, runfiles.TopicTaskPRConflicted,
	runfiles.TopicVerifyFailed, runfiles.TopicAllDone,
	"human.*", TopicStarted, TopicRan,
}

// Problems are what ralph validate finds wrong with the hooks: a command
// that is not there (its first word on PATH, or a path relative to the
// workspace to an executable), a URL that is not http or https, a topic
// that nothing publishes: no hat's trigger or publishes, none of ralph's
// own or the autopilot's topics, not human.*.
func Problems(cfg *config.Config, reg *hats.Registry, workspace string) []config.Problem {
	known := knownTopics(cfg, reg)
	var out []config.Problem
	for _, h := range cfg.Hooks {
		add := func(line int, hint, format string, args ...any) {
			out = append(out, config.Problem{File: h.File, Line: line, Msg: fmt.Sprintf(format, args...), Hint: hint})
		}
		for i, p := range h.On {
			if err := events.ValidatePattern(p); err != nil {
				add(h.OnAt[i], "", "hook %s: on: %v", h.Name, err)
			} else if !isKnown(p, known) {
				add(h.OnAt[i], "name a topic a hat triggers on or publishes, one of ralph's (loop.terminate, iteration.finished, …), an autopilot topic (task.failed, …) or human.*",
					"hook %s: on: no event has the topic %q", h.Name, p)
			}
		}
		if h.Run != "" {
			if err := CheckCommand(workspace, h.Run); err != nil {
				add(h.RunAt, "give a program on PATH or a path, relative to the workspace, to an executable file",
					"hook %s: run: %v", h.Name, err)
			}
		}
		if h.Post != "" {
			if err := CheckURL(h.Post); err != nil {
				add(h.Line, "write the URL in full, e.g. https://hooks.example.com/ralph", "hook %s: post: %v", h.Name, err)
			}
		}
	}
	return out
}

func knownTopics(cfg *config.Config, reg *hats.Registry) []string {
	known := append([]string{}, ralphTopics...)
	el := cfg.EventLoop
	known = append(known, el.StartingEvent, el.CompletionPromise, el.CancellationPromise)
	known = append(known, el.RequiredEvents...)
	for _, h := range reg.Hats() {
		known = append(known, h.Triggers...)
		known = append(known, h.Publishes...)
		if h.DefaultPublishes != "" {
			known = append(known, h.DefaultPublishes)
		}
	}
	return known
}

// isKnown reports whether pattern matches a known topic or pattern, or one
// of them matches it (build.* and build.done, either way).
func isKnown(pattern string, known []string) bool {
	for _, k := range known {
		if k != "" && (events.Match(pattern, k) || events.Match(k, pattern)) {
			return true
		}
	}
	return false
}
