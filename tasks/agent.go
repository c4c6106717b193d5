package tasks

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// A task may name the agent its loop runs with: a backend (an agent CLI:
// claude, codex, …) and a model, as a tracker can say them: "backend:NAME"
// and "model:NAME" tags or labels in every source (GitLab's scoped
// "model::NAME" too), fields of their own where the tracker's format has
// them (prd.json's "backend" and "model", a command source's), and words
// of the item's text in a checklist. The values come from whoever can
// write to the tracker, so they are data: CheckAgent says what is wrong
// with them, and the autopilot fails that task, not the run.

// Tag prefixes that name a task's agent.
const (
	BackendTag = "backend:"
	ModelTag   = "model:"
)

// maxModel is the longest model name taken: the longest the CLIs' own
// names come near (a Bedrock inference profile) is under 80.
const maxModel = 100

// agentTag is the value of tag when it names the agent with prefix ("" if
// it does not): "model:opus", "model: opus" and GitLab's scoped
// "model::opus" all name opus.
func agentTag(tag, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(tag, prefix)
	if !ok {
		return "", false
	}
	return strings.TrimSpace(strings.TrimPrefix(rest, ":")), true
}

// tagValues are the distinct values of t's tags with prefix, in order.
func (t Task) tagValues(prefix string) []string {
	var out []string
	for _, tag := range t.Tags {
		if v, ok := agentTag(tag, prefix); ok && v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// withAgent is t with Backend and Model taken from its tags where the
// tracker's own fields left them empty. CheckAgent finds two that differ.
func withAgent(t Task) Task {
	if v := t.tagValues(BackendTag); t.Backend == "" && len(v) > 0 {
		t.Backend = v[0]
	}
	if v := t.tagValues(ModelTag); t.Model == "" && len(v) > 0 {
		t.Model = v[0]
	}
	return t
}

// CheckAgent says what is wrong with the backend and model t names, nil
// when nothing is (or it names none): two different values (a field and a
// tag, or two tags), a model that is not a plain name (ValidModel), a
// backend that is not a plain word. Whether the backend is one ralph
// knows is the caller's to check: the trackers do not know the agents.
func (t Task) CheckAgent() error {
	for _, c := range []struct{ what, prefix, value string }{
		{"backend", BackendTag, t.Backend}, {"model", ModelTag, t.Model},
	} {
		values := t.tagValues(c.prefix)
		if c.value != "" && !slices.Contains(values, c.value) {
			values = append([]string{c.value}, values...)
		}
		if len(values) > 1 {
			return fmt.Errorf("task %s names %d %ss, %s: keep one", t.ID, len(values), c.what, quoteAll(values))
		}
	}
	if t.Backend != "" {
		if err := validWord("backend", t.Backend); err != nil {
			return fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	if t.Model != "" {
		if err := ValidModel(t.Model); err != nil {
			return fmt.Errorf("task %s: %w", t.ID, err)
		}
	}
	return nil
}

// ValidModel reports whether model can be handed to an agent CLI as the
// value of its model flag: a letter or digit, then letters, digits and
// . _ - : / @ [ ] (provider/model, a Bedrock id's version, Claude's
// "sonnet[1m]"), at most 100 bytes. Nothing else, because the name goes
// on the agent's command line: one that starts with '-' would be read as
// a flag of its own ("--dangerously-skip-permissions"), and spaces, quotes
// or shell characters have no place in a model's name.
func ValidModel(model string) error {
	switch {
	case model == "":
		return fmt.Errorf("model is empty")
	case len(model) > maxModel:
		return fmt.Errorf("model %.20q… is %d bytes long; a model's name is at most %d", model, len(model), maxModel)
	case !isAlnum(rune(model[0])):
		return fmt.Errorf("model %q starts with %q: a model's name starts with a letter or a digit (one starting with '-' would be read as a flag of the agent's)", model, model[:1])
	}
	for _, r := range model {
		if !isAlnum(r) && !strings.ContainsRune("._-:/@[]", r) {
			return fmt.Errorf("model %q contains %q: a model's name has only ASCII letters, digits and . _ - : / @ [ ]", model, r)
		}
	}
	return nil
}

// validWord reports whether name is a plain word (letters, digits, - and
// _, starting with a letter), as every backend's name is.
func validWord(what, name string) error {
	if name == "" || !(name[0] >= 'a' && name[0] <= 'z' || name[0] >= 'A' && name[0] <= 'Z') {
		return fmt.Errorf("%s %q is not a backend's name: one starts with a letter", what, name)
	}
	for _, r := range name {
		if !isAlnum(r) && r != '-' && r != '_' {
			return fmt.Errorf("%s %q contains %q, which no backend's name does", what, name, r)
		}
	}
	return nil
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

func quoteAll(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, " and ")
}

// checklistAgent takes the "backend:NAME" and "model:NAME" words out of a
// checklist item's text, which is what the item says its agent is: the
// title is the text without them, and its id is made from that title, so
// naming a model does not change which task the item is.
func checklistAgent(text string) (title string, tags []string) {
	var kept []string
	for _, w := range strings.Fields(text) {
		if _, ok := agentTag(w, BackendTag); ok {
			tags = append(tags, w)
			continue
		}
		if _, ok := agentTag(w, ModelTag); ok {
			tags = append(tags, w)
			continue
		}
		kept = append(kept, w)
	}
	if tags == nil {
		return text, nil
	}
	return strings.Join(kept, " "), tags
}

// agentField is a tracker's backend or model field as text: a string as
// it is, null or absent as "", anything else as its JSON text, which
// CheckAgent refuses or the agent does not know.
func agentField(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	if t := strings.TrimSpace(string(raw)); t != "null" {
		return t
	}
	return ""
}
