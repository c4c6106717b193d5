package api

import (
	"errors"

	"strings"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/runfiles"
)

// Guide publishes a person's guidance (hats.GuidanceTopic, source human)
// to the current log of the run in dir, or of the autopilot task's loop
// there, which the run's next iteration carries whatever its hat, once.
// `ralph guide`, the g key of `ralph watch`, the page's guidance box, POST
// /api/guidance and the MCP tool guide all come here. It returns what the
// command line prints.
func Guide(dir, task, text string) (string, error) {
	if strings.TrimSpace(text) == "" {
		return "", &hint.Error{Err: errors.New("the guidance has no text"),
			Fix: `say what the run should do differently, e.g. ralph guide "keep the public API as it is"`}
	}
	if task != "" {
		ws, err := TaskWorkspace(dir, task)
		if err != nil {
			return "", err
		}
		dir = ws
	}
	if _, err := runfiles.CurrentLog(dir); errors.Is(err, runfiles.ErrNoLog) {
		return "", &hint.Error{Err: errors.New("no run to guide in " + dir),
			Fix: "start one with `ralph loop`; in an autopilot's repository, name a task with --task"}
	}
	warning, err := Emit{Dir: dir, Topic: hats.GuidanceTopic, Payload: events.StringPayload(text), Source: events.SourceHuman}.Append()
	if err != nil {
		return "", err
	}
	if warning != "" {
		return "guidance sent; " + warning, nil
	}
	return "guidance sent; the run's next iteration reads it", nil
}

// GuideHelp says what guidance is, for the help of each way to send it.
const GuideHelp = `Guidance is a person's word to a running loop: it is published as a
human.guidance event to the run's current log, and the next iteration's
prompt carries it, once, whatever the hat (unless a hat triggers on
human.guidance: then that hat reads it). A run that has stopped but can be
resumed reads it when it is.`
