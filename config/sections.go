package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/hats"
	"github.com/ralph-loop/ralph/internal/suggest"
)

// decode fills c from the merged tree. Sections are decoded in a fixed
// order, whatever their order in the file, because hats need cli.
func (l *loader) decode(root *yaml.Node, c *Config) {
	var eventLoop, cli, hatsNode *yaml.Node
	l.section(root, "", []field{
		{"event_loop", keep(&eventLoop)},
		{"cli", keep(&cli)},
		{"hats", keep(&hatsNode)},
		{"acceptance_criteria", l.acceptanceCriteria(c)},
		{"gates", l.gates(&c.Gates)},
		{"memories", l.memories(c)},
		{"human", l.human(c)},
		{"redact", l.redactNames(c)},
		{"autopilot", l.autopilot(c)},
		{"hooks", l.hooks(c, root)},
		{"pricing", l.pricingSection(c)},
		{"sandbox", l.sandbox(&c.Sandbox)},
		{"chains", l.chainsSection(c)},
	}, orchestratorTopKeys)
	l.section(eventLoop, "event_loop", l.eventLoopFields(c), orchestratorEventLoopKeys)
	c.CLI = l.topCLI(cli, c.CLI)
	c.Hats = l.hats(hatsNode, c.CLI)
	l.checkTriggers()
	l.checkToolDenial(c)
}

func keep(dst **yaml.Node) func(*yaml.Node, string) {
	return func(n *yaml.Node, _ string) { *dst = n }
}

func (l *loader) eventLoopFields(c *Config) []field {
	el := &c.EventLoop
	return []field{
		{"prompt", func(n *yaml.Node, path string) {
			if v, ok := l.str(n, path); ok {
				el.Prompt = v
				c.promptSource = fmt.Sprintf("%s (%s:%d)", path, l.origin[n], n.Line)
			}
		}},
		{"prompt_file", func(n *yaml.Node, path string) {
			if v, ok := l.str(n, path); ok {
				el.PromptFile, c.promptFileAt = v, l.at(n)
			}
		}},
		{"completion_promise", l.setTopic(&el.CompletionPromise, false)},
		{"starting_event", l.setTopic(&el.StartingEvent, false)},
		{"max_iterations", l.setIterations(&el.MaxIterations)},
		{"max_runtime_seconds", l.setCount(&el.MaxRuntimeSeconds, "no limit")},
		{"max_cost_usd", l.setCost(&el.MaxCostUSD)},
		{"max_consecutive_failures", l.setCount(&el.MaxConsecutiveFailures, "no limit")},
		{"cooldown_delay_seconds", l.setCount(&el.CooldownDelaySeconds, "no delay")},
		{"required_events", l.setTopics(&el.RequiredEvents, "topic", true)},
		{"cancellation_promise", l.setTopic(&el.CancellationPromise, true)},
		{"enforce_hat_scope", l.setBool(&el.EnforceHatScope)},
		{"completion_confirmations", l.setConfirmations(&el.CompletionConfirmations)},
		{"iteration_timeout_seconds", l.setCount(&el.IterationTimeoutSeconds, "no limit")},
		{"idle_timeout_seconds", l.setCount(&el.IdleTimeoutSeconds, "no limit")},
		{"kill_grace_seconds", l.setCount(&el.KillGraceSeconds, "SIGKILL at once")},
		{"max_output_line_bytes", l.setCount(&el.MaxOutputLineBytes, "no limit")},
		{"max_output_text_bytes", l.setCount(&el.MaxOutputTextBytes, "no limit")},
		{"max_activity_bytes", l.setCount(&el.MaxActivityBytes, "no limit")},
		{"max_raw_output_bytes", l.setCount64(&el.MaxRawOutputBytes, "no limit")},
		{"max_tokens", l.setCount64(&el.MaxTokens, "no limit")},
		{"tokens_per_hour", l.setCount64(&el.TokensPerHour, "no budget")},
		{"tokens_per_day", l.setCount64(&el.TokensPerDay, "no budget")},
		{"cost_per_hour", l.setCost(&el.CostPerHour)},
		{"cost_per_day", l.setCost(&el.CostPerDay)},
		{"stuck_threshold", l.setCount(&el.StuckThreshold, "no stuck check")},
		{"rate_limit_max_wait_seconds", l.setCount(&el.RateLimitMaxWaitSeconds, "not waiting")},
		{"verify_every_iteration", l.setBool(&el.VerifyEveryIteration)},
	}
}

// setIterations decodes max_iterations, which must allow at least one
// iteration: there is no "unlimited", because a runaway loop costs money.
func (l *loader) setIterations(dst *int) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		v, ok := l.integer(n, path)
		if ok && v < 1 {
			l.problem(n, "set how many iterations a run may take, e.g. max_iterations: 100",
				"%s must be at least 1, got %d", path, v)
			return
		}
		if ok {
			*dst = int(v)
		}
	}
}

func (l *loader) setCost(dst *float64) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		v, ok := l.number(n, path)
		if ok && v < 0 {
			l.problem(n, "use a positive amount in US dollars, or 0 for no limit", "%s must not be negative, got %g", path, v)
			return
		}
		if ok {
			*dst = v
		}
	}
}

func (l *loader) setConfirmations(dst *int) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		v, ok := l.integer(n, path)
		if ok && v != 1 && v != 2 {
			l.problem(n, "use 1 to accept the first completion claim, or 2 to have a fresh agent confirm it",
				"%s must be 1 or 2, got %d", path, v)
			return
		}
		if ok {
			*dst = int(v)
		}
	}
}

// topCLI decodes the cli: section over the default.
func (l *loader) topCLI(n *yaml.Node, def CLI) CLI {
	c, set, at := def, map[string]bool{}, (*yaml.Node)(nil)
	var chain []chainEntry
	l.section(n, "cli", l.topCLIFields(&c, set, &at, &chain), orchestratorCLIKeys)
	l.checkCommand(c, at, "cli")
	l.checkChain(c, chain, "cli")
	return c
}

// topCLIFields are the keys of the cli: section: a backend's, its chain's,
// and the tools every agent is denied, which only cli: has.
func (l *loader) topCLIFields(c *CLI, set map[string]bool, at **yaml.Node, chain *[]chainEntry) []field {
	fields := append(l.cliFields(c, set, at, false), l.fallbackFields(c, set, chain)...)
	return append(fields, field{"disallowed_tools", l.setTools(&c.DisallowedTools, "")})
}

// cliFields are the keys of a cli: mapping. set collects the keys present
// and at the node of backend:. A hat's backend mapping also takes
// ralph-orchestrator's name for backend:, type:.
func (l *loader) cliFields(c *CLI, set map[string]bool, at **yaml.Node, hat bool) []field {
	mark := func(key string, decode func(*yaml.Node, string)) field {
		return field{key, func(n *yaml.Node, path string) { set[key] = true; decode(n, path) }}
	}
	backend := func(n *yaml.Node, path string) {
		if n.Kind == yaml.MappingNode {
			// backend: {name: codex, model: …, args: …, env: …, command: …}
			l.section(n, path, l.cliFields(c, set, at, true), nil)
			return
		}
		if v, ok := l.str(n, path); ok {
			c.Backend, *at = l.backendName(n, path, v), n
		}
	}
	fields := []field{
		mark("backend", backend),
		mark("command", l.setCommand(&c.Command)),
		mark("args", func(n *yaml.Node, path string) { c.Args, _ = l.stringList(n, path, false) }),
		mark("prompt_mode", l.setPromptMode(&c.PromptMode)),
		mark("prompt_flag", l.setString(&c.PromptFlag)),
		mark("env", func(n *yaml.Node, path string) { c.Env = l.stringMap(n, path) }),
		mark("model", l.setString(&c.Model)),
	}
	if hat {
		// A backend mapping names its CLI with name:, or with
		// ralph-orchestrator's type:.
		for _, key := range []string{"name", "type"} {
			fields = append(fields, field{key, func(n *yaml.Node, path string) {
				set["backend"] = true
				if v, ok := l.str(n, path); ok {
					c.Backend, *at = l.backendName(n, path, v), n
				}
			}})
		}
	}
	return fields
}

// setCommand decodes a backend's command, resolving a relative path
// against the directory of the file that set it (see [Load]): with -C DIR,
// or run from a subdirectory, ./agent.sh still means the one beside
// ralph.yml, and with several -c files each command means the file next to
// its own config.
func (l *loader) setCommand(dst *string) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		v, ok := l.str(n, path)
		if !ok {
			return
		}
		dir, onDisk := l.dirs[l.origin[n]]
		if onDisk && isRelativePath(v) {
			v = filepath.Join(dir, v)
		}
		*dst = v
	}
}

// isRelativePath reports whether a command names a file by a relative
// path; a bare name has no separator and is looked up on PATH. A command
// with a space ("sh ./x.sh") is a program and its arguments written as one
// string: left as written, so that the error about it can say to move the
// arguments to cli.args.
func isRelativePath(cmd string) bool {
	return !filepath.IsAbs(cmd) && strings.ContainsAny(cmd, "/"+string(filepath.Separator)) &&
		!strings.ContainsAny(cmd, " \t")
}

// backendName checks a backend name and returns ralph's name for it ("" if
// there is none).
func (l *loader) backendName(n *yaml.Node, path, name string) string {
	if alias, ok := backendAliases[name]; ok {
		return alias
	}
	if slices.Contains(backendNames, name) {
		return name
	}
	hint := "use one of: " + strings.Join(backendNames, ", ") + "; command runs the program given in command:"
	if s := suggest.Closest(name, backendNames); s != "" {
		l.problem(n, hint, "%s: unknown backend %q; did you mean %q?", path, name, s)
	} else {
		l.problem(n, hint, "%s: unknown backend %q", path, name)
	}
	return ""
}

func (l *loader) setPromptMode(dst *string) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		v, ok := l.str(n, path)
		if ok && v != "arg" && v != "stdin" {
			l.problem(n, `use "arg" to pass the prompt as an argument after prompt_flag, or "stdin" to write it to the agent's standard input`,
				`%s must be "arg" or "stdin", got %q`, path, v)
			return
		}
		if ok {
			*dst = v
		}
	}
}

// checkCommand reports a command backend without a program to run; at is
// where the backend was named (nil when it was not named here).
func (l *loader) checkCommand(c CLI, at *yaml.Node, path string) {
	if at == nil || c.Backend != "command" || c.Command != "" {
		return
	}
	l.problem(at, "set "+path+".command to the program to run, e.g. command: ./agent.sh",
		"%s.backend is \"command\" but %s.command is not set", path, path)
}

// hats decodes the hats: mapping, in file order.
func (l *loader) hats(n *yaml.Node, cli CLI) []Hat {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		l.problem(n, "write each hat under its id, e.g. hats: {builder: {triggers: [build.start]}}",
			"hats: expected a mapping of hat ids to hats, got %s", describe(n))
		return nil
	}
	var list []Hat
	for i := 0; i+1 < len(n.Content); i += 2 {
		list = append(list, l.hat(n.Content[i], n.Content[i+1], cli))
	}
	return list
}

func (l *loader) hat(k, v *yaml.Node, cli CLI) Hat {
	h := Hat{ID: k.Value, Line: k.Line, File: l.origin[k]}
	l.checkHatID(k)
	l.section(v, "hats."+h.ID, l.hatFields(&h, cli), orchestratorHatKeys)
	l.checkWaveRole(k, v, h)
	if h.Name == "" {
		h.Name = h.ID
	}
	return h
}

func (l *loader) hatFields(h *Hat, cli CLI) []field {
	return []field{
		{"name", l.setString(&h.Name)},
		{"description", l.setString(&h.Description)},
		{"triggers", l.setTriggers(h)},
		{"publishes", l.setTopics(&h.Publishes, "topic", true)},
		{"instructions", l.setString(&h.Instructions)},
		{"default_publishes", l.setTopic(&h.DefaultPublishes, true)},
		{"max_activations", l.setCount(&h.MaxActivations, "no bound")},
		{"concurrency", l.setAtLeastOne(&h.Concurrency, "concurrency: 3")},
		{"aggregate", l.aggregate(h)},
		{"timeout", l.setCount(&h.Timeout, "the aggregator's timeout, else 300 seconds")},
		{"backend", func(n *yaml.Node, path string) {
			h.Backend = l.hatBackend(n, path, cli)
			l.toolSites[hatBackendSite(h.ID)] = n
		}},
		{"gates", l.gates(&h.Gates)},
		{"sandbox", func(n *yaml.Node, path string) {
			s := Sandbox{}
			l.sandbox(&s)(n, path)
			h.Sandbox = &s
		}},
		{"disallowed_tools", l.setTools(&h.DisallowedTools, h.ID)},
	}
}

// triggerSite is one trigger of one hat, for the check that no two hats
// claim the same topic.
type triggerSite struct {
	hat   string
	topic string
	node  *yaml.Node
}

func (l *loader) setTriggers(h *Hat) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		vals, nodes := l.stringList(n, path, true)
		for i, v := range vals {
			if !l.checkTopic(nodes[i], path, v, "topic pattern") {
				continue
			}
			if v == hats.ReservedResumeTopic {
				l.problem(nodes[i], "ralph publishes "+v+" to hand control back to its coordinator; trigger on a topic of your own",
					"%s: %q is reserved for ralph", path, v)
				continue
			}
			l.triggers = append(l.triggers, triggerSite{hat: h.ID, topic: v, node: nodes[i]})
		}
		h.Triggers = vals
	}
}

// checkTriggers reports a topic that two hats trigger on: an event must go
// to one hat, or the choice of hat would depend on file order.
func (l *loader) checkTriggers() {
	first := map[string]triggerSite{}
	for _, s := range l.triggers {
		f, seen := first[s.topic]
		if !seen {
			first[s.topic] = s
			continue
		}
		if f.hat == s.hat {
			continue
		}
		here := l.origin[s.node]
		l.problem(s.node, "an event goes to one hat: keep the trigger on one of them, or have one publish a new topic for the other",
			"hats %q (%s) and %q (%s) both trigger on %q",
			f.hat, l.ref(f.node, here), s.hat, l.ref(s.node, here), s.topic)
	}
}

// ref is "line N" for a node in file here, "file:N" for one elsewhere.
func (l *loader) ref(n *yaml.Node, here string) string {
	if file := l.origin[n]; file != here {
		return fmt.Sprintf("%s:%d", file, n.Line)
	}
	return fmt.Sprintf("line %d", n.Line)
}

// checkHatID reports an id that cannot name a hat. Ids appear in event
// records, in RALPH_HAT and in topics such as <id>.exhausted, so they are
// kept to letters, digits, - and _.
func (l *loader) checkHatID(k *yaml.Node) {
	id := k.Value
	switch {
	case id == hats.CoordinatorID:
		l.problem(k, "choose another id for this hat", "hat id %q is taken by ralph's built-in coordinator", id)
	case !validHatID(id):
		l.problem(k, "use letters, digits, - and _, starting with a letter or digit; the id names the hat in events and in RALPH_HAT",
			"hat id %q has characters ralph does not allow", id)
	}
}

func validHatID(id string) bool {
	if id == "" || !isAlnum(rune(id[0])) {
		return false
	}
	for _, r := range id {
		if !isAlnum(r) && r != '-' && r != '_' {
			return false
		}
	}
	return true
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// hatBackend decodes a hat's backend: a name, or a mapping shaped like cli:.
func (l *loader) hatBackend(n *yaml.Node, path string, cli CLI) *CLI {
	switch n.Kind {
	case yaml.ScalarNode:
		name := l.backendName(n, path, n.Value)
		if name == "command" {
			l.problem(n, "write the backend as a mapping: backend: {backend: command, command: ./agent.sh}",
				"%s is \"command\", which needs a command to run", path)
		}
		if name == "" {
			return nil
		}
		return &CLI{Backend: name}
	case yaml.MappingNode:
		var c CLI
		set, at := map[string]bool{}, (*yaml.Node)(nil)
		var chain []chainEntry
		l.section(n, path, append(l.cliFields(&c, set, &at, true), l.fallbackFields(&c, set, &chain)...), orchestratorHatBackendKeys)
		if !set["backend"] {
			c = overlay(cli, c, set)
		}
		l.checkCommand(c, at, path)
		l.checkChain(c, chain, path)
		return &c
	case yaml.DocumentNode, yaml.SequenceNode, yaml.AliasNode:
		// Not a backend: reported below.
	}
	l.problem(n, "write a backend name, e.g. backend: codex, or a mapping like cli:",
		"%s: expected a backend name or a mapping, got %s", path, describe(n))
	return nil
}

// overlay is base with the keys set in over laid on it; env merges key by
// key, as maps do when files merge.
func overlay(base, over CLI, set map[string]bool) CLI {
	c := base
	c.Args = slices.Clone(base.Args)
	if set["command"] {
		c.Command = over.Command
	}
	if set["args"] {
		c.Args = over.Args
	}
	if set["prompt_mode"] {
		c.PromptMode = over.PromptMode
	}
	if set["prompt_flag"] {
		c.PromptFlag = over.PromptFlag
	}
	if set["model"] {
		c.Model = over.Model
	}
	c.DisallowedTools = nil // cli:'s; Config.DisallowedTools adds them to the hat's
	c.Fallback = slices.Clone(base.Fallback)
	if set["fallback"] {
		c.Fallback = over.Fallback
	}
	if set["fallback_after_seconds"] {
		c.FallbackAfterSeconds = over.FallbackAfterSeconds
	}
	c.Env = nil
	if len(base.Env)+len(over.Env) > 0 {
		c.Env = make(map[string]string, len(base.Env)+len(over.Env))
		maps.Copy(c.Env, base.Env)
		maps.Copy(c.Env, over.Env)
	}
	return c
}

// aggregate decodes a hat's aggregate: section.
func (l *loader) aggregate(h *Hat) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		a := Aggregate{}
		l.section(n, path, []field{
			{"mode", l.setChoice(&a.Mode, AggregateModes)},
			{"timeout", l.setCount(&a.Timeout, "300 seconds")},
		}, nil)
		if n.Kind == yaml.MappingNode && !hasKey(n, "mode") {
			l.problem(n, "add mode: wait_for_all", "%s: no mode; the one mode is wait_for_all", path)
		}
		h.Aggregate = &a
	}
}

// checkWaveRole refuses a hat that both runs waves and collects them: its
// own results would be what it waits for.
func (l *loader) checkWaveRole(k, v *yaml.Node, h Hat) {
	if h.Concurrency <= 1 || h.Aggregate == nil {
		return
	}
	at := k
	if n := valueOf(v, "aggregate"); n != nil {
		at = n
	}
	l.problem(at, "split it in two: a hat with concurrency: that publishes the results, and one with aggregate: that triggers on them",
		"hats.%s: a hat cannot have both concurrency: %d and aggregate: a wave's workers cannot also wait for the wave", h.ID, h.Concurrency)
}

// valueOf is the node of key in mapping n, or nil.
func valueOf(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}
