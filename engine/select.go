package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/engine/memory"
	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// selecting chooses the hat, builds its prompt and records the start of the
// iteration.
func (e *Engine) selecting() (runfiles.Phase, error) {
	hat, offsets, evs := e.choose()
	confirming := e.st.Confirming != nil
	if !confirming && e.exhausted(hat) {
		return e.dropExhausted(hat, e.ownOffsets(offsets))
	}
	if !confirming && hat.Waves() {
		if id, waveOffsets, _ := waveOf(offsets, evs); id != "" {
			return e.startWave(hat, id, waveOffsets)
		}
	}
	n := e.st.Iteration + 1
	backend := e.pick(hat.ID)
	prompt := hats.BuildPrompt(e.promptInput(hat, evs, offsets, n))
	kept, err := e.keepPrompt(n, prompt)
	if err != nil {
		return "", err
	}
	var lines []events.Event
	switched := e.switchBack(hat.ID, n, backend)
	if switched != nil {
		lines = append(lines, runfiles.RalphEvent(runfiles.TopicBackendSwitched, *switched))
	}
	lines = append(lines, runfiles.RalphEvent(runfiles.TopicIterationStarted, runfiles.IterationStartedRecord{
		Iteration: n, Hat: hat.ID, Events: offsets, Confirming: confirming, Backend: backend.Name(), Sandbox: sandboxOf(backend),
		DisallowedTools: deniedOf(backend), Attempt: kept.recorded(), Prompt: kept.file, PromptBytes: kept.bytes, PromptSHA256: kept.sha256}))
	if err := e.append(lines...); err != nil {
		return "", err
	}
	e.iter = iteration{
		info: IterationInfo{N: n, Max: e.opts.Settings.MaxIterations, Hat: hat, Backend: backend.Name(), Sandbox: sandboxOf(backend),
			Confirming: confirming, Prompt: prompt, Started: e.now(),
			PromptFile: e.workspaceRel(kept.file), PromptBytes: kept.bytes, PromptSHA256: kept.sha256},
		events:  offsets,
		attempt: kept.attempt,
		backend: backend,
	}
	if err := e.saveAs(runfiles.PhaseRunning); err != nil {
		return "", err
	}
	if switched != nil {
		e.reportSwitch(*switched)
	}
	e.opts.Reporter.IterationStarted(e.iter.info)
	return runfiles.PhaseRunning, nil
}

// choose picks the hat for the pending events and takes the ones it owns
// (hats.Owner of the hats each was routed to when it was decided). A
// confirmation iteration is the coordinator's, with no events: it judges
// the claim afresh.
func (e *Engine) choose() (hats.Hat, []int64, []events.Event) {
	if e.st.Confirming != nil {
		return e.hat(hats.CoordinatorID), []int64{}, nil
	}
	all := make([]events.Event, len(e.st.Pending))
	for i, p := range e.st.Pending {
		all[i] = p.Event
	}
	hat := e.opts.Hats.Choose(all).Hat
	offsets, evs := []int64{}, []events.Event{}
	for _, p := range e.st.Pending {
		if hats.Owner(p.To) == hat.ID || hats.Floats(p.Event, p.To) {
			offsets = append(offsets, p.Offset)
			evs = append(evs, p.Event)
		}
	}
	return hat, offsets, evs
}

// ownOffsets is offsets without the floating guidance (see hats.Floats),
// which waits for the hat that runs next rather than fall with an exhausted
// one; all of offsets when that is all there is, so the loop moves on.
func (e *Engine) ownOffsets(offsets []int64) []int64 {
	var own []int64
	for _, p := range e.st.Pending {
		if slices.Contains(offsets, p.Offset) && !hats.Floats(p.Event, p.To) {
			own = append(own, p.Offset)
		}
	}
	if len(own) == 0 {
		return offsets
	}
	return own
}

func (e *Engine) exhausted(h hats.Hat) bool {
	return h.MaxActivations > 0 && e.st.Activations[h.ID] >= h.MaxActivations
}

// dropExhausted drops the events of a hat that has used up its activations
// and publishes <hat>.exhausted the first time.
func (e *Engine) dropExhausted(h hats.Hat, offsets []int64) (runfiles.Phase, error) {
	lines := []events.Event{runfiles.RalphEvent(runfiles.TopicEventDropped, runfiles.DroppedRecord{Offsets: offsets, Hat: h.ID, Reason: "exhausted"})}
	if !slices.Contains(e.st.Exhausted, h.ID) {
		lines = append(lines, runfiles.RalphEvent(h.ID+runfiles.SuffixExhausted, fmt.Sprintf(
			"Hat %s reached max_activations (%d); its pending events were dropped.", h.ID, h.MaxActivations)))
	}
	e.opts.Reporter.Warn(fmt.Sprintf("hat %s reached max_activations (%d); dropped %s", h.ID, h.MaxActivations,
		plural.Count(len(offsets), "pending event", "pending events")))
	if err := e.append(lines...); err != nil {
		return "", err
	}
	return runfiles.PhaseSettling, e.saveAs(runfiles.PhaseSettling)
}

func (e *Engine) promptInput(h hats.Hat, evs []events.Event, offsets []int64, n int) hats.PromptInput {
	in := hats.PromptInput{
		Objective:       e.objective(),
		Hat:             h,
		Events:          evs,
		EventOffsets:    offsets,
		Routes:          e.opts.Hats.Routes(h),
		CompletionTopic: e.opts.Settings.CompletionTopic,
		EmitCommand:     e.opts.RalphBin,
		Iteration:       n,
		LastIteration:   e.st.LastNote,
		Scratchpad:      e.scratchpad(),
		Memories:        e.memories(h, evs),
		ScratchpadPath:  e.scratchpadRel(),
	}
	if e.st.Confirming != nil {
		in.Confirming, in.Claim = true, *e.st.Confirming
	}
	in.WaveRoutes = e.opts.Hats.WaveRoutes(h)
	in.LastIteration = e.withMissingWorkers(h, evs, in.LastIteration)
	return in
}

func (e *Engine) objective() string {
	if e.st != nil && e.st.Objective != "" {
		return e.st.Objective
	}
	return e.opts.Objective
}

// source is where the run's objective came from: as recorded when it
// started, since a resume keeps that objective whatever its flags say.
func (e *Engine) source() string {
	if e.st != nil && e.st.Source != "" {
		return e.st.Source
	}
	return e.opts.Source
}

// memories picks the long-term memories most relevant to this iteration's
// objective, hat and events, within the configured budget.
func (e *Engine) memories(h hats.Hat, evs []events.Event) string {
	budget := e.opts.Settings.MemoriesBudget
	if budget <= 0 {
		return ""
	}
	// A chain step's memories are the workspace's: they outlive runs.
	ws := runfiles.In(e.opts.Workspace)
	ms, err := memory.Store{Path: ws.Memories(), Root: ws.Path()}.List()
	if err != nil {
		e.opts.Reporter.Warn("cannot read memories: " + err.Error())
		return ""
	}
	query := []string{e.objective(), h.Name, h.Instructions}
	for _, ev := range evs {
		query = append(query, ev.Topic, ev.PayloadText())
	}
	return memory.Select(ms, strings.Join(query, " "), budget)
}

// scratchpadLimit bounds the scratchpad injected into a prompt; the newest
// part is kept because that is what the agent wrote last.
const scratchpadLimit = 16 * 1024

func (e *Engine) scratchpadPath() string {
	return e.files().Scratchpad()
}

// scratchpadRel is the scratchpad as a prompt names it, relative to the
// workspace: a chain step's is in its own directory.
func (e *Engine) scratchpadRel() string {
	rel, err := filepath.Rel(e.opts.Workspace, e.scratchpadPath())
	if err != nil || e.opts.StateDir == "" {
		return runfiles.ScratchpadRel
	}
	return filepath.ToSlash(rel)
}

// scratchpad is the agent's notes for the prompt. A link in the
// scratchpad's place is not read: a repository that brings one would have
// ralph send the file it points to to the model.
func (e *Engine) scratchpad() string {
	data, err := ralphdir.ReadFile(e.dir, e.scratchpadPath())
	if _, isLink := errors.AsType[*ralphdir.LinkError](err); isLink {
		e.opts.Reporter.Warn("the scratchpad is left out of the prompt: " + err.Error())
	}
	if err != nil || len(data) == 0 {
		return ""
	}
	if len(data) <= scratchpadLimit {
		return string(data)
	}
	cut := len(data) - scratchpadLimit
	return fmt.Sprintf("[the first %d bytes are cut; the whole file is %s]\n%s", cut, e.scratchpadRel(), data[cut:])
}
