// Package examples holds ralph's presets: complete, commented ralph.yml
// files for common ways of working (presets/<name>.yml), embedded in the
// binary so that `ralph init --preset NAME` can write one and `ralph loop
// -H NAME` can use its hats, and the PROMPT.md template `ralph init` writes
// beside a preset. The demo/ folder is `make demo`'s example and is not a
// preset.
//
// Each preset starts with two comment lines: the yaml-language-server
// $schema line, so that editors complete and check keys, and
// "# description: …", the line `ralph init --list` shows.
package examples

import (
	"bufio"
	"bytes"
	"embed"
	"path"
	"slices"
	"strings"
)

//go:embed presets/*.yml
var presetFiles embed.FS

// DefaultPreset is the preset `ralph init` writes when none is named: the
// general-purpose plan, build, review loop.
const DefaultPreset = "code-assist"

// SchemaURL is where editors find ralph.yml's JSON Schema; every preset's
// first line points there.
const SchemaURL = "https://raw.githubusercontent.com/ralph-loop/ralph/main/ralph.schema.json"

// order is how presets are listed: the default first, then by kind, the
// simplest of each first: building, improving what exists, fixing,
// reviewing (read-only), researching. Presets not named here follow, by
// name.
var order = []string{
	"code-assist", "solo", "tdd", "spec", "spec-driven", // build
	"refactor", "test-writing", "perf", "docs", // improve
	"debug", "triage", "merge-conflict", // fix
	"review", "pr-review", "wave-review", "security", "qa", // review
	"research",
}

// Preset is one embedded preset.
type Preset struct {
	Name        string // the file name without .yml
	Description string // from the "# description:" line
	Data        []byte // the file as written
}

// Path is the preset's name as config messages show it.
func (p Preset) Path() string { return "preset:" + p.Name }

// Presets returns every preset, in listing order.
func Presets() []Preset {
	entries, err := presetFiles.ReadDir("presets")
	if err != nil {
		panic("examples: embedded presets missing: " + err.Error()) // cannot happen: go:embed checked it
	}
	var out []Preset
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".yml")
		if !ok {
			continue
		}
		p, _ := Lookup(name)
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b Preset) int { return compareNames(a.Name, b.Name) })
	return out
}

func compareNames(a, b string) int {
	ia, ib := rank(a), rank(b)
	if ia != ib {
		return ia - ib
	}
	return strings.Compare(a, b)
}

func rank(name string) int {
	if i := slices.Index(order, name); i >= 0 {
		return i
	}
	return len(order)
}

// Names lists the presets' names, in listing order.
func Names() []string {
	var names []string
	for _, p := range Presets() {
		names = append(names, p.Name)
	}
	return names
}

// Lookup returns the preset called name.
func Lookup(name string) (Preset, bool) {
	if name == "" || strings.ContainsAny(name, "/\\.") {
		return Preset{}, false
	}
	data, err := presetFiles.ReadFile(path.Join("presets", name+".yml"))
	if err != nil {
		return Preset{}, false
	}
	return Preset{Name: name, Description: description(data), Data: data}, true
}

// description is the text of the "# description:" line among the leading
// comments.
func description(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#") {
			break
		}
		if d, ok := strings.CutPrefix(line, "# description:"); ok {
			return strings.TrimSpace(d)
		}
	}
	return ""
}
