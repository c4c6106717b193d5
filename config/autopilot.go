package config

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/criteria"
)

// Autopilot is the autopilot: section: where `ralph autopilot` takes its
// tasks from and how it runs and merges them. The hats, backend and
// event_loop of the same config apply to each task's loop.
type Autopilot struct {
	Source       TaskSource      `yaml:"source"`
	Parallel     int             `yaml:"parallel"`            // default 1; at least 1
	MaxTasks     int             `yaml:"max_tasks"`           // 0: no limit
	BaseBranch   string          `yaml:"base_branch"`         // default: the current branch
	Merge        string          `yaml:"merge"`               // merge | rebase | squash
	Retries      int             `yaml:"retries"`             // default 1
	Verify       []criteria.Spec `yaml:"verify"`              // run on each merged result
	WorktreesDir string          `yaml:"worktrees_dir"`       // default .worktrees
	TrustTasks   bool            `yaml:"trust_task_commands"` // run tasks' command criteria
	Cluster      Cluster         `yaml:"cluster"`             // slots as workers on other machines
	// Sandbox is laid over the top-level sandbox: for the slots' agents
	// (see Config.SlotSandbox).
	Sandbox Sandbox `yaml:"sandbox"`
}

// Cluster is autopilot.cluster: where the autopilot's slots are workers
// (`ralph worker`) on other machines, coordinated through NATS JetStream.
type Cluster struct {
	// NATS lists the servers' URLs, comma-separated (nats://h1:4222,…;
	// tls:// for TLS); empty runs the slots locally.
	NATS string `yaml:"nats"`
	// Creds is a NATS credentials file, for servers that want one.
	Creds string `yaml:"creds"`
	// NKey is a file holding an nkey seed the coordinator authenticates
	// to the servers with (their authorization lists its public key).
	NKey string `yaml:"nkey"`
	// Seed is the file of the coordinator's signing key (an nkey seed);
	// empty: ~/.config/ralph/coordinator.nk. The file, never the seed.
	Seed string `yaml:"seed"`
	// TrustWorkers are the public keys of the workers whose results the
	// coordinator takes, or files of them.
	TrustWorkers []string `yaml:"trust_workers"`
	// Replicas is how many servers keep each of ralph's streams; default 1.
	Replicas int `yaml:"replicas"`
	// Remote is the git remote the coordinator and the workers share;
	// default origin.
	Remote string `yaml:"remote"`
}

// TaskSource is autopilot.source: a tracker by name (tk, beads, prd,
// checklist, command) with its settings.
type TaskSource struct {
	Type string `yaml:"type"`
	// Path is the file of a prd or checklist source.
	Path string `yaml:"path"`
	// List, Claim, Close and Fail are the shell commands of a command
	// source.
	List  string `yaml:"list"`
	Claim string `yaml:"claim"`
	Close string `yaml:"close"`
	Fail  string `yaml:"fail"`
	// Files are the paths, relative to the repository root, that a
	// command source's commands change; none: what each command changed.
	Files []string `yaml:"files"`
}

// SourceTypes are the task sources ralph knows.
var SourceTypes = []string{"tk", "beads", "prd", "checklist", "command"}

// MergeModes are the ways finished work reaches the base branch.
var MergeModes = []string{"merge", "rebase", "squash"}

func defaultAutopilot() Autopilot {
	return Autopilot{Source: TaskSource{Type: "tk"}, Parallel: 1, Merge: "merge", Retries: 1, WorktreesDir: ".worktrees",
		Cluster: Cluster{Replicas: 1, Remote: "origin"}}
}

func (l *loader) autopilot(c *Config) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		c.autopilotSection = true
		l.section(n, path, l.autopilotFields(&c.Autopilot), nil)
	}
}

// ForAutopilot reports whether the config has an autopilot: section: its
// loops take their objectives from the tasks, so it needs none of its own.
func (c *Config) ForAutopilot() bool { return c.autopilotSection }

func (l *loader) autopilotFields(a *Autopilot) []field {
	return []field{
		{"source", l.taskSource(&a.Source)},
		{"parallel", l.setAtLeastOne(&a.Parallel, "parallel: 3")},
		{"max_tasks", l.setCount(&a.MaxTasks, "no limit")},
		{"base_branch", l.setString(&a.BaseBranch)},
		{"merge", l.setChoice(&a.Merge, MergeModes)},
		{"retries", l.setCount(&a.Retries, "no retry")},
		{"verify", func(n *yaml.Node, path string) { a.Verify = l.criteriaList(n, path) }},
		{"worktrees_dir", l.setString(&a.WorktreesDir)},
		{"trust_task_commands", l.setBool(&a.TrustTasks)},
		{"cluster", func(n *yaml.Node, path string) { l.section(n, path, l.clusterFields(&a.Cluster), nil) }},
		{"sandbox", l.sandbox(&a.Sandbox)},
	}
}

func (l *loader) clusterFields(c *Cluster) []field {
	return []field{
		{"nats", l.setString(&c.NATS)},
		{"creds", l.setString(&c.Creds)},
		{"nkey", l.setKeyFile(&c.NKey)},
		{"seed", l.setKeyFile(&c.Seed)},
		{"trust_workers", func(n *yaml.Node, path string) { c.TrustWorkers = l.publicKeys(n, path) }},
		{"replicas", l.setAtLeastOne(&c.Replicas, "replicas: 3")},
		{"remote", l.setString(&c.Remote)},
	}
}

// seedLike is an nkey seed written out: a private key, which has no
// place in a config file that is committed.
var seedLike = regexp.MustCompile(`^S[UAO][A-Z2-7]{50,}$`)

// setKeyFile decodes the path of a file that holds a key, refusing the
// key itself; the refusal does not repeat it.
func (l *loader) setKeyFile(dst *string) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		v, ok := l.str(n, path)
		if !ok {
			return
		}
		if seedLike.MatchString(strings.TrimSpace(v)) {
			l.problem(n, "put the seed in a file only you can read (ralph cluster keygen coordinator writes one) and give that file's path here",
				"%s holds a seed, a private key, which must never be in a config file", path)
			return
		}
		*dst = v
	}
}

// publicKeys decodes a list of public keys or files of them; a seed among
// them is refused without being repeated.
func (l *loader) publicKeys(n *yaml.Node, path string) []string {
	vals, nodes := l.stringList(n, path, true)
	var keys []string
	for i, v := range vals {
		if seedLike.MatchString(strings.TrimSpace(v)) {
			l.problem(nodes[i], "list public keys (U…), which `ralph cluster pubkey` prints, and keep seeds out of config files",
				"%s[%d] is a seed, a private key, which must never be in a config file", path, i)
			continue
		}
		keys = append(keys, v)
	}
	return keys
}

// taskSource decodes autopilot.source: a type name, or a mapping with
// type: and that type's keys.
func (l *loader) taskSource(dst *TaskSource) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		if n.Kind == yaml.ScalarNode {
			*dst = TaskSource{}
			l.setChoice(&dst.Type, SourceTypes)(n, path)
			return
		}
		src := TaskSource{}
		l.section(n, path, l.taskSourceFields(&src), nil)
		if src.Type == "" {
			l.problem(n, "say which tracker, e.g. source: {type: prd, path: prd.json}", "%s: type is missing", path)
			return
		}
		if src.Type == "command" && (src.List == "" || src.Close == "") {
			l.problem(n, "give at least list: and close: commands for a command source", "%s: a command source needs list and close", path)
		}
		if src.Type != "command" && len(src.Files) > 0 {
			l.problem(n, "leave files: out: only a command source's files are unknown to ralph; "+src.Type+" names its own",
				"%s: files is for a command source", path)
		}
		*dst = src
	}
}

func (l *loader) taskSourceFields(s *TaskSource) []field {
	return []field{
		{"type", l.setChoice(&s.Type, SourceTypes)},
		{"path", l.setString(&s.Path)},
		{"list", l.setString(&s.List)},
		{"claim", l.setString(&s.Claim)},
		{"close", l.setString(&s.Close)},
		{"fail", l.setString(&s.Fail)},
		{"files", l.setRepoPaths(&s.Files)},
	}
}

// setRepoPaths decodes a list of paths inside the repository, relative to
// its root.
func (l *loader) setRepoPaths(dst *[]string) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		vals, nodes := l.stringList(n, path, false)
		var paths []string
		for i, v := range vals {
			clean := filepath.Clean(filepath.FromSlash(v))
			if v == "" || filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
				l.problem(nodes[i], "write a path relative to the repository's root, inside it, e.g. tasks/",
					"%s: %q is not a path inside the repository", path, v)
				continue
			}
			paths = append(paths, filepath.ToSlash(clean))
		}
		*dst = paths
	}
}

// setChoice decodes a string that must be one of choices.
func (l *loader) setChoice(dst *string, choices []string) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		v, ok := l.str(n, path)
		if !ok {
			return
		}
		if !slices.Contains(choices, v) {
			l.problem(n, "use one of: "+strings.Join(choices, ", "), "%s: unknown value %q", path, v)
			return
		}
		*dst = v
	}
}

// setAtLeastOne decodes a whole number that must be 1 or more.
func (l *loader) setAtLeastOne(dst *int, example string) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		v, ok := l.integer(n, path)
		if !ok {
			return
		}
		if v < 1 {
			l.problem(n, "use 1 or more, e.g. "+example, "%s must be at least 1, got %d", path, v)
			return
		}
		*dst = int(v)
	}
}
