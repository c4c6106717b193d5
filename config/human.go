package config

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Human is the human: section: how a run waits for the answer to a
// question an agent asks with `ralph ask`.
type Human struct {
	// TimeoutSeconds is the wait when `ralph ask` has no --timeout; 0
	// waits until the question is answered.
	TimeoutSeconds int `yaml:"timeout_seconds"`
	// OnTimeout is what happens when the wait ends unanswered: continue
	// (the next prompt says no answer came) or stop (the run ends,
	// reason no_answer, exit 1).
	OnTimeout string `yaml:"on_timeout"`
}

// OnTimeoutModes are the values of human.on_timeout.
var OnTimeoutModes = []string{"continue", "stop"}

func (l *loader) human(c *Config) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		l.section(n, path, []field{
			{"timeout_seconds", l.setCount(&c.Human.TimeoutSeconds, "no timeout")},
			{"on_timeout", func(n *yaml.Node, path string) {
				v, ok := l.str(n, path)
				if ok && !slices.Contains(OnTimeoutModes, v) {
					l.problem(n, "use one of: "+strings.Join(OnTimeoutModes, ", ")+" (stop ends the run, exit 1)",
						"%s: unknown value %q", path, v)
					return
				}
				if ok {
					c.Human.OnTimeout = v
				}
			}},
		}, nil)
	}
}
