package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClosest(t *testing.T) {
	keys := []string{"max_iterations", "max_runtime_seconds", "prompt", "prompt_file"}
	backends := []string{"auto", "claude", "codex", "command", "copilot", "custom", "gemini", "opencode", "pi", "qwen"}
	tests := []struct {
		name       string
		word       string
		candidates []string
		want       string
	}{
		{"one missing letter", "max_iteration", keys, "max_iterations"},
		{"several edits in a long word", "max_iterashuns", keys, "max_iterations"},
		{"case is ignored", "MAX_ITERATIONS", keys, "max_iterations"},
		{"short word, one edit", "promt", keys, "prompt"},
		{"nearest wins", "prompt_fil", keys, "prompt_file"},
		{"a fragment is not a typo", "runtime", keys, ""},
		{"nothing near", "flavour", keys, ""},
		{"empty word", "", keys, ""},
		{"empty word, one-letter candidate", "", []string{"a"}, ""},
		{"no candidates", "prompt", nil, ""},
		{"backend, missing letter", "claud", backends, "claude"},
		{"backend, swapped letters", "cladue", backends, "claude"},
		{"backend, doubled letter", "gemnii", backends, "gemini"},
		{"backend, short word", "codx", backends, "codex"},
		{"backend, capitals", "Aut", backends, "auto"},
		{"backend, wild guess", "emacs", backends, ""},
		// Two edits in a three-letter word is a guess, not a typo. (The
		// backends package once allowed len/3+1 edits and said "codex" here;
		// the config loader, which checks the same names, never did.)
		{"backend, two edits in three letters", "cdx", backends, ""},
		{"ties go to the earlier candidate", "cat", []string{"bat", "cab"}, "bat"},
		{"ties go to the earlier candidate, reversed", "cat", []string{"cab", "bat"}, "cab"},
		{"the candidate as given", "prompt", []string{"Prompt"}, "Prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Closest(tt.word, tt.candidates))
		})
	}
}

func TestMaxDistance(t *testing.T) {
	for word, want := range map[string]int{"": 1, "pi": 1, "codx": 2, "claud": 2, "max_iteration": 4} {
		assert.Equal(t, want, maxDistance(word), word)
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "abc", 3},
		{"claude", "claude", 0},
		{"cladue", "claude", 2},
		{"kitten", "sitting", 3},
		{"héllo", "hello", 1},
	}
	for _, tt := range tests {
		t.Run(tt.a+"/"+tt.b, func(t *testing.T) {
			assert.Equal(t, tt.want, distance(tt.a, tt.b))
			assert.Equal(t, tt.want, distance(tt.b, tt.a))
		})
	}
}
