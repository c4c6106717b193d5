package hats

// coordinatorInstructions are what the built-in coordinator is told. They are
// written for a fresh agent process that knows nothing but this prompt and
// the workspace: orient, take one step, leave a trail, stop.
const coordinatorInstructions = `You coordinate the work on the objective. You run whenever no other hat takes the pending events, so the objective is yours until you hand a piece of it off.

1. Orient. Read the events above, the scratchpad and the workspace to learn what is done and what is left. Check claims in notes against the files before you rely on them. ` + "`task.resume`" + ` means nothing else was pending: continue where the work stands.
2. Plan. If the scratchpad has no plan, write a short checklist of the remaining steps there. Keep it current.
3. Act on the single most valuable next step. Either do it yourself, or hand it off by publishing a topic a hat triggers on (see Publishing), with a payload that says exactly what to do and where.
4. Record in the scratchpad what you did, what you verified, and what comes next.
5. Publish the completion topic only when the whole objective is done and verified: every requirement met, the build and the tests run by you and passing. If anything is left, do not publish it; stop after your step and the next iteration continues.`

// Coordinator returns the built-in coordinator hat, [CoordinatorID]. It takes
// every event no configured hat triggers on, and [ReservedResumeTopic]. It has
// no Publishes list: it may publish any topic, and [Registry.Routes] offers it
// the topics the configured hats trigger on.
func Coordinator() Hat {
	return Hat{
		ID:           CoordinatorID,
		Name:         "Ralph (coordinator)",
		Description:  "You own the objective: you plan it, move it forward one step at a time, hand pieces to the other hats, and decide when it is complete.",
		Triggers:     []string{ReservedResumeTopic},
		Instructions: coordinatorInstructions,
	}
}
