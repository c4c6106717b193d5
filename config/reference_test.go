package config

// The key reference of docs/configuration.md (its "Every key" section) is
// written from the JSON Schema, which TestSchemaKeysMatchLoader holds to
// the loader: every key ralph reads, its type, default and meaning. `make
// docs` writes it; TestConfigurationReferenceIsCurrent fails when the page
// and the schema disagree.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/internal/golden"
)

// The markers around the generated part of the page.
const (
	referenceStart = "<!-- every-key: written from ralph.schema.json by `make docs`; edit config/schema_docs.go, not this list -->\n"
	referenceEnd   = "<!-- every-key: end -->\n"
)

func TestConfigurationReferenceIsCurrent(t *testing.T) {
	path := filepath.Join("..", "docs", "configuration.md")
	page, err := os.ReadFile(path)
	require.NoError(t, err)
	before, rest, ok := strings.Cut(string(page), referenceStart)
	require.True(t, ok, "docs/configuration.md has no line %q", referenceStart)
	_, after, ok := strings.Cut(rest, referenceEnd)
	require.True(t, ok, "docs/configuration.md has no line %q", referenceEnd)
	want := before + referenceStart + renderKeyReference(t) + referenceEnd + after
	if golden.Updating() {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		return
	}
	if string(page) != want {
		t.Fatalf("the key reference of docs/configuration.md is not what the JSON Schema says: " +
			"run `make docs` to write it again and commit it")
	}
}

// schemaNode is what the reference reads of a schema.
type schemaNode struct {
	Ref         string                `json:"$ref"`
	Type        any                   `json:"type"`
	Enum        []any                 `json:"enum"`
	AnyOf       []schemaNode          `json:"anyOf"`
	Items       *schemaNode           `json:"items"`
	Default     any                   `json:"default"`
	Description string                `json:"description"`
	Deprecated  bool                  `json:"deprecated"`
	Properties  map[string]schemaNode `json:"properties"`
	Additional  any                   `json:"additionalProperties"`
	Defs        map[string]schemaNode `json:"$defs"`
}

// referenceSections are the tables of the reference: a heading, the
// $defs entry whose keys it lists ("" for the top level), and a sentence
// on where those keys go.
var referenceSections = []struct{ heading, def, where string }{
	{"Top level", "", "The sections of `ralph.yml`, and the flat keys of a `ralph.json` task file."},
	{"event_loop", "event_loop", "How the loop runs: the objective, the topics that start and end it, its limits."},
	{"cli", "cli", "The agent every hat runs unless it names its own."},
	{"hats.ID", "hat", "One hat, under its id."},
	{"A hat's backend", "hatBackend", "`backend:` of a hat, when it is a mapping rather than a name."},
	{"A hat's aggregate", "aggregate", "`aggregate:` of a hat that collects a wave's results; see [Waves](waves.md)."},
	{"Criteria", "criterion", "One criterion of `acceptance_criteria`, `gates` or `autopilot.verify`, when it is a mapping rather than a name."},
	{"memories", "memories", ""},
	{"human", "human", ""},
	{"hooks", "hook", "One hook of the `hooks:` list."},
	{"autopilot", "autopilot", ""},
	{"autopilot.source", "taskSource", "The task source, when it is a mapping rather than a name."},
	{"autopilot.cluster", "cluster", "The coordinator's side of a cluster of workers."},
	{"autopilot.pr", "pr", "How `deliver: pr` opens and follows pull requests (merge requests on GitLab); see [Delivering results](autopilot.md#delivering-results)."},
	{"sandbox", "sandbox", "The top-level `sandbox:`, a hat's and `autopilot.sandbox` (see [Sandboxing agents](#sandboxing-agents))."},
	{"pricing.MODEL", "price", "One model's price, in US dollars."},
}

func renderKeyReference(t *testing.T) string {
	var root schemaNode
	require.NoError(t, json.Unmarshal(JSONSchema(), &root))
	var b strings.Builder
	for _, s := range referenceSections {
		props := root.Properties
		if s.def != "" {
			def, ok := root.Defs[s.def]
			require.True(t, ok, "the schema has no $defs entry %q", s.def)
			props = def.Properties
		}
		fmt.Fprintf(&b, "\n### %s\n\n", s.heading)
		if s.where != "" {
			fmt.Fprintf(&b, "%s\n\n", s.where)
		}
		b.WriteString("| key | type | default | what |\n| --- | --- | --- | --- |\n")
		var ignored []string
		for _, key := range slices.Sorted(mapsKeys(props)) {
			p := props[key]
			doc, implemented := schemaDocs[docPath(s.def, key)]
			if p.Deprecated && !implemented {
				ignored = append(ignored, "`"+key+"`")
				continue
			}
			if doc == "" {
				doc = p.Description
			}
			typ := typeOf(p)
			if p.Deprecated {
				// ralph's hooks: is a list; ralph-orchestrator's, a mapping
				// the loader ignores, is what the schema describes.
				typ = "list of hook"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", key, cellText(typ), cellText(defaultOf(p)), cellText(doc))
		}
		if len(ignored) > 0 {
			fmt.Fprintf(&b, "\nAccepted from ralph-orchestrator's configs and ignored, with a warning: %s.\n", strings.Join(ignored, ", "))
		}
	}
	b.WriteString("\n")
	return b.String()
}

func mapsKeys(m map[string]schemaNode) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// docPath is the key of schemaDocs that describes key of def.
func docPath(def, key string) string {
	switch def {
	case "":
		return key
	case "hatBackend":
		def = "cli"
	case "taskSource":
		def = "autopilot.source"
	case "cluster":
		def = "autopilot.cluster"
	case "pr":
		def = "autopilot.pr"
	}
	return def + "." + key
}

// typeOf says in words what a key holds.
func typeOf(p schemaNode) string {
	switch {
	case p.Ref != "":
		return refName(p.Ref)
	case len(p.AnyOf) > 0:
		var alts []string
		for _, a := range p.AnyOf {
			alts = append(alts, typeOf(a))
		}
		return strings.Join(alts, ", or ")
	case len(p.Enum) > 0:
		var vals []string
		for _, v := range p.Enum {
			if v != "" {
				vals = append(vals, fmt.Sprint(v))
			}
		}
		return "one of " + strings.Join(vals, ", ")
	}
	switch tp := p.Type.(type) {
	case string:
		if tp == "array" && p.Items != nil {
			return "list of " + typeOf(*p.Items)
		}
		if tp == "object" && p.Additional != nil {
			return "mapping"
		}
		return tp
	case []any:
		var names []string
		for _, n := range tp {
			names = append(names, fmt.Sprint(n))
		}
		return strings.Join(names, " or ")
	}
	return ""
}

// refName names a $defs entry the way the reference's headings do.
func refName(ref string) string {
	switch name := strings.TrimPrefix(ref, "#/$defs/"); name {
	case "stringOrList":
		return "string or list of strings"
	case "criteria":
		return "criterion, or list of criteria"
	case "gates":
		return "mapping of topic pattern to criteria"
	case "hatBackend":
		return "a hat's backend"
	case "taskSource":
		return "autopilot.source"
	case "cluster":
		return "autopilot.cluster"
	case "pr":
		return "autopilot.pr"
	default:
		return name
	}
}

// defaultOf is a key's default as YAML would spell it; an object's
// defaults are those of its keys.
func defaultOf(p schemaNode) string {
	switch d := p.Default.(type) {
	case nil, map[string]any:
		return ""
	case string:
		if d == "" {
			return ""
		}
		return "`" + d + "`"
	case float64:
		return "`" + strconv.FormatFloat(d, 'f', -1, 64) + "`"
	default:
		return "`" + fmt.Sprint(d) + "`"
	}
}

// cellText is text fit for a Markdown table cell.
func cellText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("|", `\|`, "<", `\<`, ">", `\>`, "*", `\*`).Replace(s)
}
