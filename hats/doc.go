// Package hats owns the roles the agent can wear and everything decided per
// iteration from them: the validated hat configuration ([Registry]), which hat
// takes which pending events ([Registry.Choose]), and the prompt the agent is
// given ([BuildPrompt]). It imports only events.
//
// # Hats and the coordinator
//
// A configured [Hat] triggers on topic patterns and may publish topics. The
// built-in coordinator ([CoordinatorID], see [Coordinator]) is always present:
// it takes every event no configured hat triggers on, and
// [ReservedResumeTopic], which ralph publishes when nothing else is pending.
//
// # Choosing the hat
//
// Targeted events first, then the oldest pending event's first receiver in
// config order, else the coordinator; the chosen hat takes every pending
// event routed to it. The choice depends only on the pending events and the
// configuration, so the same log always yields the same choice. See
// [Registry.Choose].
//
// # Prompts
//
// [BuildPrompt] renders markdown in a fixed section order, shows payloads in
// full (a payload, objective, claim or note too long for a prompt as its
// beginning and end, with the ralph command that prints it all), and tells
// the agent which topics it may publish, who receives them, and how to
// publish (`ralph emit`, or an <event> tag as a fallback). On the
// confirmation iteration a fresh agent verifies the completion claim; it
// rejects the claim by publishing nothing and saying what is missing.
//
// # The topology
//
// [BuildGraph] draws the hand-offs from the starting event to the
// completion topic, [Check] finds what in them cannot work, and the graph
// renders as text, Mermaid or DOT ([Graph.ASCII], [Graph.Mermaid],
// [Graph.DOT]); [WriteList] and [Graph.WriteHat] are `ralph hats list` and
// `ralph hats show`.
package hats
