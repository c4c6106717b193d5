package hats

import "github.com/ralph-loop/ralph/events"

// PromptInput is everything one iteration's prompt is built from.
type PromptInput struct {
	Objective string
	Hat       Hat
	// Events are the pending events this hat must handle, oldest first.
	Events []events.Event
	// EventOffsets are where each of Events starts in the run's event log,
	// so that a payload too long for the prompt can be named exactly in the
	// command that prints it (`ralph events --offset N --payload`). Without
	// them the command names the event's topic.
	EventOffsets []int64
	// Routes say, for each topic the hat may publish, which hats receive it.
	Routes []Route
	// CompletionTopic is the topic that claims the whole objective is done.
	CompletionTopic string
	// EmitCommand is the absolute path of the ralph binary, so the agent can
	// run `<EmitCommand> emit TOPIC PAYLOAD` even from a login shell.
	EmitCommand string
	// Iteration is the 1-based iteration number.
	Iteration int
	// LastIteration says what happened in the previous iteration: rejected
	// events, failures, failed criteria with their evidence. Empty on the
	// first iteration.
	LastIteration string
	// Confirming is set on the confirmation iteration: a fresh agent is shown
	// the objective and the claim and must publish the completion topic again
	// only if the work is really done. A verifier that rejects the claim
	// publishes nothing and says what is missing in its final message (see
	// BuildPrompt); Hat and Events are not shown.
	Confirming bool
	// Claim is the completion payload being confirmed (with Confirming).
	Claim string
	// Scratchpad and Memories are injected as given; the caller trims them.
	Scratchpad string
	Memories   string
	// Worker is set in the prompt of one worker of a wave: the hat's
	// instructions for its one event, and the rules of a wave.
	Worker *Worker
	// WaveRoutes are the topics the hat may publish that a wave hat
	// triggers on, for the prompt's wave dispatch section.
	WaveRoutes []WaveRoute
	// ScratchpadPath is where the agent keeps notes for later iterations,
	// relative to the workspace (the engine's is under .ralph/, where
	// package runfiles says).
	ScratchpadPath string
}

// Route is one topic a hat may publish and the hats that receive it.
type Route struct {
	Topic     string
	Receivers []string // hat IDs; empty when nobody triggers on it
}

// Worker is one worker of a wave: the Index-th (0-based) of Total.
type Worker struct {
	WaveID       string
	Index, Total int
}

// WaveRoute is a topic that goes to a wave hat, which runs up to
// Concurrency workers at once.
type WaveRoute struct {
	Topic       string
	Hat         string
	Concurrency int
}
