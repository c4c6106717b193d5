package config

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/ralph-loop/ralph/criteria"
)

// SchemaURL is where the JSON Schema of ralph.yml is published (the
// repository's ralph.schema.json, which a test keeps equal to JSONSchema).
// Presets name it in their yaml-language-server comment.
const SchemaURL = "https://raw.githubusercontent.com/ralph-loop/ralph/main/ralph.schema.json"

// schema is one JSON Schema object. A map, so that encoding/json writes
// its keys sorted and the output is stable.
type schema = map[string]any

// JSONSchema is the JSON Schema (draft 2020-12) of ralph.yml, indented and
// ending in a newline, for editors (yaml-language-server) and `ralph
// schema`.
//
// It is generated from the types the loader fills: each section's
// properties are the yaml tags of its struct (EventLoop, CLI, Hat,
// Memories, criteria.Spec), typed from the Go field, with the constraints
// and alternatives the loader accepts (a topic or a list of topics, a
// backend name or a mapping, a criterion name or a mapping) laid over from
// schemaShapes, and descriptions from schemaDocs. Every section has
// additionalProperties: false, so a misspelt key is flagged; the keys of
// ralph-orchestrator that ralph accepts with a warning are listed as
// deprecated, so its files still validate.
func JSONSchema() []byte {
	s := schema{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  SchemaURL,
		"title":                "ralph.yml",
		"description":          "Configuration of ralph, which runs a coding agent in a loop until a task is verifiably done. See `ralph schema`, `ralph init --list` and `ralph validate`.",
		"type":                 "object",
		"additionalProperties": false,
		"properties":           topProperties(),
		"patternProperties": schema{
			"^_": schema{"description": "Holds YAML anchors for reuse elsewhere in the file; ignored otherwise."},
		},
		"$defs": schemaDefs(),
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		panic("config: encode JSON Schema: " + err.Error()) // only maps, strings, bools and numbers
	}
	return b.Bytes()
}

func ref(name string) schema { return schema{"$ref": "#/$defs/" + name} }

// withDoc adds the description of path to s, if there is one.
func withDoc(s schema, path string) schema {
	if d := schemaDocs[path]; d != "" {
		s["description"] = d
	}
	return s
}

func topProperties() schema {
	props := schema{
		"event_loop":          withDoc(ref("event_loop"), "event_loop"),
		"cli":                 withDoc(ref("cli"), "cli"),
		"hats":                withDoc(schema{"type": "object", "propertyNames": schema{"pattern": "^[A-Za-z0-9][A-Za-z0-9_-]*$"}, "additionalProperties": ref("hat")}, "hats"),
		"acceptance_criteria": withDoc(ref("criteria"), "acceptance_criteria"),
		"gates":               withDoc(ref("gates"), "gates"),
		"memories":            withDoc(ref("memories"), "memories"),
		"human":               withDoc(ref("human"), "human"),
		"autopilot":           withDoc(ref("autopilot"), "autopilot"),
		"hooks":               withDoc(schema{"type": "array", "items": ref("hook")}, "hooks"),
		"pricing":             withDoc(schema{"type": "object", "additionalProperties": ref("price")}, "pricing"),
		"sandbox":             withDoc(ref("sandbox"), "sandbox"),
		"chains":              withDoc(schema{"type": "object", "additionalProperties": ref("chain")}, "chains"),
		"redact":              withDoc(schema{"type": "array", "items": schema{"type": "string", "pattern": envName.String()}}, "redact"),
		"budget": schema{"type": "object", "additionalProperties": false,
			"description": "ralph.json's budget; budget.max_tokens is event_loop.max_tokens.",
			"properties":  schema{"max_tokens": schema{"type": "integer", "minimum": 0}}},
	}
	sections := map[string]schema{"event_loop": sectionProperties("event_loop", reflect.TypeFor[EventLoop]()),
		"cli": sectionProperties("cli", reflect.TypeFor[CLI]())}
	for _, f := range flatKeys {
		alias := cloneSchema(sections[f.section][f.key].(schema))
		alias["description"] = "Same as " + f.section + "." + f.key + " (a ralph.json, or ralph-orchestrator's v1 flat key)."
		props[f.name] = alias
	}
	addIgnored(props, orchestratorTopKeys)
	return props
}

func schemaDefs() schema {
	cli := sectionProperties("cli", reflect.TypeFor[CLI]())
	addIgnored(cli, orchestratorCLIKeys)
	hatBackend := sectionProperties("cli", reflect.TypeFor[CLI]())
	for _, k := range []string{"name", "type"} {
		hatBackend[k] = schema{"description": "The backend's name, as backend: (" + k + ": is ralph-orchestrator's spelling).", "enum": backendEnum()}
	}
	addIgnored(hatBackend, orchestratorHatBackendKeys)
	delete(hatBackend, "disallowed_tools") // cli:'s and the hat's own, not a backend's
	fallbackBackend := cloneSchema(hatBackend)
	delete(fallbackBackend, "fallback")
	delete(fallbackBackend, "fallback_after_seconds")
	for _, k := range orchestratorHatBackendKeys {
		delete(fallbackBackend, k)
	}
	eventLoop := sectionProperties("event_loop", reflect.TypeFor[EventLoop]())
	addIgnored(eventLoop, orchestratorEventLoopKeys)
	hat := sectionProperties("hat", reflect.TypeFor[Hat]())
	addIgnored(hat, orchestratorHatKeys)
	memories := sectionProperties("memories", reflect.TypeFor[Memories]())
	addIgnored(memories, orchestratorMemoriesKeys)
	human := sectionProperties("human", reflect.TypeFor[Human]())
	criterion := sectionProperties("criterion", reflect.TypeFor[criteria.Spec]())
	autopilot := sectionProperties("autopilot", reflect.TypeFor[Autopilot]())
	taskSource := sectionProperties("autopilot.source", reflect.TypeFor[TaskSource]())
	cluster := sectionProperties("autopilot.cluster", reflect.TypeFor[Cluster]())
	pullRequests := sectionProperties("autopilot.pr", reflect.TypeFor[PullRequests]())
	sandbox := sectionProperties("sandbox", reflect.TypeFor[Sandbox]())
	hook := object(sectionProperties("hook", reflect.TypeFor[Hook]()), "hook")
	hook["required"] = []string{"on"}
	price := schema{}
	for _, k := range priceKeys {
		price[k] = withDoc(schema{"type": "number", "minimum": 0}, "price."+k)
	}
	return schema{
		"price": withDoc(schema{"type": "object", "additionalProperties": false, "properties": price,
			"anyOf": []schema{{"required": []string{"input", "output"}}, {"required": []string{"per_request"}}}}, "price"),
		"hook":            hook,
		"chain":           chainSchema(),
		"cluster":         object(cluster, "autopilot.cluster"),
		"pr":              object(pullRequests, "autopilot.pr"),
		"sandbox":         object(sandbox, "sandbox"),
		"autopilot":       object(autopilot, "autopilot"),
		"taskSource":      object(taskSource, "autopilot.source"),
		"event_loop":      object(eventLoop, "event_loop"),
		"cli":             object(cli, "cli"),
		"hatBackend":      object(hatBackend, "hat.backend"),
		"fallbackBackend": object(fallbackBackend, "cli.fallback[]"),
		"fallbackEntry": schema{"anyOf": []schema{
			{"enum": backendEnum(), "description": "A backend by name, with its defaults."},
			ref("fallbackBackend"),
		}},
		"hat": object(hat, "hat"),
		"aggregate": func() schema {
			s := object(sectionProperties("hat.aggregate", reflect.TypeFor[Aggregate]()), "hat.aggregate")
			s["required"] = []string{"mode"}
			return s
		}(),
		"memories": object(memories, "memories"),
		"human":    object(human, "human"),
		"criterion": func() schema {
			s := object(criterion, "criterion")
			s["required"] = []string{"type"}
			return s
		}(),
		"criterionItem": schema{"anyOf": []schema{
			{"type": "string", "enum": criteria.Types(), "description": "A criterion by name, with its defaults."},
			ref("criterion"),
		}},
		"criteria": schema{"anyOf": []schema{
			ref("criterionItem"),
			{"type": "array", "items": ref("criterionItem")},
		}},
		"gates": schema{"type": "object", "additionalProperties": ref("gate")},
		"gate": schema{"anyOf": []schema{
			ref("criteria"),
			{"type": "object", "additionalProperties": false, "properties": schema{
				"criteria": withDoc(ref("criteria"), "gate.criteria"),
				"evidence": withDoc(ref("stringOrList"), "gate.evidence"),
			}},
		}},
		"stringOrList": schema{"anyOf": []schema{
			{"type": "string"},
			{"type": "array", "items": schema{"type": "string"}},
		}},
	}
}

// object is a section's schema: its properties and nothing else.
func object(props schema, path string) schema {
	return withDoc(schema{"type": "object", "additionalProperties": false, "properties": props}, path)
}

// sectionProperties types each yaml-tagged field of struct t, plus the
// keys the loader takes without a field of their own (schemaExtra).
func sectionProperties(section string, t reflect.Type) schema {
	props := schema{}
	defaults := sectionDefaults(section)
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if key == "" || key == "-" {
			continue
		}
		path := section + "." + key
		s := fieldSchema(path, f.Type)
		if d, ok := defaults[key]; ok {
			s["default"] = d
		}
		props[key] = withDoc(s, path)
	}
	for key, s := range schemaExtra[section] {
		props[key] = withDoc(cloneSchema(s), section+"."+key)
	}
	return props
}

// sectionDefaults are the non-zero defaults of a section, from Default().
func sectionDefaults(section string) map[string]any {
	var v reflect.Value
	switch section {
	case "event_loop":
		v = reflect.ValueOf(Default().EventLoop)
	case "cli":
		v = reflect.ValueOf(Default().CLI)
	case "autopilot":
		a := Default().Autopilot
		a.Source = TaskSource{}
		v = reflect.ValueOf(a)
	default:
		return nil
	}
	out := map[string]any{}
	for i := range v.NumField() {
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		if key != "" && key != "-" && !v.Field(i).IsZero() {
			out[key] = v.Field(i).Interface()
		}
	}
	return out
}

// fieldSchema types one field: its shape from schemaShapes, else from its
// Go type. A type with no JSON counterpart panics, so that a new field
// cannot reach the schema (and its test) untyped.
func fieldSchema(path string, t reflect.Type) schema {
	if shape, ok := schemaShapes[path]; ok {
		return cloneSchema(shape)
	}
	switch t.Kind() {
	case reflect.String:
		return schema{"type": "string"}
	case reflect.Bool:
		return schema{"type": "boolean"}
	case reflect.Int, reflect.Int64:
		return schema{"type": "integer", "minimum": 0}
	case reflect.Float64:
		return schema{"type": "number", "minimum": 0}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return schema{"type": "array", "items": schema{"type": "string"}}
		}
	case reflect.Map:
		if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String {
			// Any scalar is read as its text (PORT: 8080).
			return schema{"type": "object", "additionalProperties": schema{"type": []string{"string", "number", "boolean", "null"}}}
		}
	}
	panic("config: no JSON Schema for " + path + " (" + t.String() + "); add it to schemaShapes")
}

// schemaShapes are the fields whose values are more than their Go type
// says: the alternatives and bounds the loader accepts.
var schemaShapes = map[string]schema{
	"event_loop.max_iterations":           {"type": "integer", "minimum": 1},
	"event_loop.completion_confirmations": {"type": "integer", "enum": []int{1, 2}},
	"event_loop.required_events":          ref("stringOrList"),
	"cli.backend":                         {"enum": backendEnum()},
	"cli.prompt_mode":                     {"enum": []string{"arg", "stdin"}},
	"cli.fallback_after_seconds":          {"type": "integer", "minimum": 1, "default": DefaultFallbackAfterSeconds},
	"cli.fallback":                        {"anyOf": []schema{ref("fallbackEntry"), {"type": "array", "items": ref("fallbackEntry")}}},
	"human.on_timeout":                    {"enum": OnTimeoutModes, "default": "continue"},
	"hat.triggers":                        ref("stringOrList"),
	"hat.disallowed_tools":                ref("stringOrList"),
	"cli.disallowed_tools":                ref("stringOrList"),
	"hat.publishes":                       ref("stringOrList"),
	"hat.backend":                         {"anyOf": []schema{{"enum": backendEnum()}, ref("hatBackend")}},
	"hat.gates":                           ref("gates"),
	"hat.concurrency":                     {"type": "integer", "minimum": 1, "default": 1},
	"hat.aggregate":                       ref("aggregate"),
	"hat.aggregate.mode":                  {"enum": AggregateModes},
	"criterion.type":                      {"enum": criteria.Types()},
	"criterion.exit_code":                 {"type": "integer"},
	"criterion.baseline":                  {"enum": []string{"", "ignore"}},
	"autopilot.source": {"anyOf": []schema{{"enum": SourceTypes}, ref("taskSource")},
		"default": "tk"},
	"autopilot.source.type":           {"enum": SourceTypes},
	"autopilot.parallel":              {"type": "integer", "minimum": 1},
	"autopilot.merge":                 {"enum": MergeModes},
	"autopilot.verify":                ref("criteria"),
	"autopilot.cluster":               ref("cluster"),
	"autopilot.cluster.replicas":      {"type": "integer", "minimum": 1, "default": 1},
	"autopilot.cluster.remote":        {"type": "string", "default": "origin"},
	"autopilot.cluster.trust_workers": ref("stringOrList"),
	"autopilot.sandbox":               ref("sandbox"),
	"autopilot.deliver":               {"enum": DeliverModes, "default": "merge"},
	"autopilot.remote":                {"type": "string", "default": "origin"},
	"autopilot.pr":                    ref("pr"),
	"autopilot.pr.close_on":           {"enum": CloseOnModes, "default": "merged"},
	"autopilot.pr.labels":             ref("stringOrList"),
	"autopilot.pr.forge":              {"enum": PRForges},
	"autopilot.pr.repo":               {"type": "string", "pattern": "^[^/]+/[^/]+$"},
	"autopilot.pr.api_url":            {"type": "string", "format": "uri"},
	"autopilot.pr.token_env":          {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
	"autopilot.pr.poll_seconds":       {"type": "integer", "minimum": 1, "default": DefaultPollSeconds},
	"autopilot.source.repo":           {"type": "string", "pattern": "^[^/]+/[^/]+$"},
	"autopilot.source.labels":         ref("stringOrList"),
	"autopilot.source.states":         ref("stringOrList"),
	"autopilot.source.api_url":        {"type": "string", "format": "uri"},
	"autopilot.source.token_env":      {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
	"hat.sandbox":                     ref("sandbox"),
	"sandbox.mode":                    {"enum": SandboxModes},
	"sandbox.write":                   ref("stringOrList"),
	"sandbox.deny_read":               ref("stringOrList"),
	"sandbox.network":                 {"enum": SandboxNetworks, "default": DefaultSandboxNetwork},
	"hook.on":                         ref("stringOrList"),
	"hook.timeout_seconds":            {"type": "integer", "minimum": 1, "default": DefaultHookTimeoutSeconds},
	"hook.on_error":                   {"enum": HookOnError, "default": "warn"},
}

// schemaExtra are keys the loader takes that have no yaml-tagged field.
var schemaExtra = map[string]map[string]schema{
	"criterion": {"timeout_seconds": {"type": "integer", "minimum": 0}},
}

// backendEnum is every name cli.backend accepts, aliases included.
func backendEnum() []string {
	names := slices.Clone(backendNames)
	aliases := make([]string, 0, len(backendAliases))
	for a := range backendAliases {
		aliases = append(aliases, a)
	}
	sort.Strings(aliases)
	return append(names, aliases...)
}

// addIgnored lists ralph-orchestrator's keys that ralph accepts with a
// warning: any value, marked deprecated so editors strike them through.
func addIgnored(props schema, keys []string) {
	for _, k := range keys {
		props[k] = schema{"deprecated": true,
			"description": "A ralph-orchestrator key: ralph accepts it and ignores it, with a warning."}
	}
}

// cloneSchema copies the top level of s, so that adding a description or
// default to one use does not change the shared shape.
func cloneSchema(s schema) schema {
	out := make(schema, len(s))
	for k, v := range s {
		out[k] = v
	}
	return out
}

// chainSchema is one chain under chains:, its steps and its budget.
func chainSchema() schema {
	bound := func(typ, key string) schema {
		return withDoc(schema{"type": typ, "exclusiveMinimum": 0}, "chain.budget."+key)
	}
	step := schema{"anyOf": []schema{
		{"type": "string", "description": "A preset name (ralph init --list) or a config file (a path, or a name ending in .yml, .yaml or .json)."},
		{"type": "object", "additionalProperties": false, "properties": schema{
			"preset": withDoc(schema{"type": "string"}, "chain.step.preset"),
			"config": withDoc(schema{"type": "string"}, "chain.step.config"),
			"prompt": withDoc(schema{"type": "string"}, "chain.step.prompt"),
		}, "oneOf": []schema{{"required": []string{"preset"}}, {"required": []string{"config"}}}},
	}}
	return withDoc(schema{"type": "object", "additionalProperties": false, "required": []string{"steps"},
		"properties": schema{
			"steps": withDoc(schema{"type": "array", "minItems": 1, "items": step}, "chain.steps"),
			"budget": withDoc(schema{"type": "object", "additionalProperties": false, "properties": schema{
				"max_steps":           bound("integer", "max_steps"),
				"max_runtime_seconds": bound("integer", "max_runtime_seconds"),
				"max_cost_usd":        bound("number", "max_cost_usd"),
				"max_tokens":          bound("integer", "max_tokens"),
			}}, "chain.budget"),
		}}, "chain")
}
