package config

import (
	"slices"

	"gopkg.in/yaml.v3"
)

// Collection is a hat collection (ralph loop -H): a file, or a preset,
// whose hats replace the config's, together with the rules that make those
// hats work.
type Collection struct {
	// Name is how messages name it: the file's path, or "preset:NAME".
	Name string
	Data []byte
	// Dir is where a relative event_loop.prompt_file or command set by the
	// collection is looked for; "" means next to Name, which suits a file.
	Dir string
}

// collectionKeys are the sections a collection lays over the config. The
// hats replace the config's; event_loop merges key by key, so the
// collection's completion topic, starting event, required events and
// limits are kept (ralph-orchestrator's overlay drops them, and its
// collections stall); the gates replace the config's when the collection
// has some, since they name the collection's topics. acceptance_criteria
// is not among them: it is about the project (its tests, its files), not
// the hats, so the config's criteria stay and a collection's apply only
// when the config has none.
var collectionKeys = []string{"hats", "event_loop", "gates"}

// LoadWithCollection is [Load] with a hat collection laid over the merged
// files; with no paths it lays the collection over the defaults.
//
// Every other section of the collection (cli:, memories:, …) lies under
// the files instead: what they set wins, and the collection fills in only
// what they leave unset. So `-H tdd` keeps the backend ralph.yml chose,
// yet a collection used without a ralph.yml brings its own. Keys ralph
// does not implement are reported for the collection as for any file.
func LoadWithCollection(paths []string, col Collection) (*Config, error) {
	return loadLayered(paths, &col, Options{})
}

// overlayCollection lays collection col (a parsed top-level mapping, nil
// when it could not be parsed) over base as LoadWithCollection describes.
func (l *loader) overlayCollection(base, col *yaml.Node, name string) *yaml.Node {
	if col == nil {
		return base
	}
	if findKey(col, "hats") == nil {
		l.problems = append(l.problems, Problem{File: name, Line: col.Line,
			Msg:  "a hat collection needs a hats: section",
			Hint: "pass -H a preset name (ralph init --list) or a file with hats: and, if needed, event_loop:"})
		return base
	}
	var over, under []*yaml.Node
	for i := 0; i+1 < len(col.Content); i += 2 {
		if slices.Contains(collectionKeys, col.Content[i].Value) {
			over = append(over, col.Content[i], col.Content[i+1])
		} else {
			under = append(under, col.Content[i], col.Content[i+1])
		}
	}
	drop := []string{"hats"}
	if findKey(col, "gates") != nil {
		drop = append(drop, "gates")
	}
	root := l.without(l.merge(l.mapping(col, under), base), drop)
	return l.merge(root, l.mapping(col, over))
}

// without is a copy of mapping m without the keys in drop.
func (l *loader) without(m *yaml.Node, drop []string) *yaml.Node {
	var pairs []*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !slices.Contains(drop, m.Content[i].Value) {
			pairs = append(pairs, m.Content[i], m.Content[i+1])
		}
	}
	return l.mapping(m, pairs)
}
