package config

import (
	"cmp"
	"net/url"
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
	// Deliver is how verified work leaves the machine: merge (onto the
	// local base branch), push (and the base branch pushed to Remote)
	// or pr (the task's branch pushed and a pull request opened).
	Deliver string `yaml:"deliver"`
	// Remote is the git remote push and pr deliver to; default origin.
	Remote string `yaml:"remote"`
	// PR is how deliver: pr opens and follows pull requests.
	PR PullRequests `yaml:"pr"`
}

// PullRequests is autopilot.pr: where deliver: pr opens its pull requests
// (merge requests on GitLab) and when a task counts as done.
type PullRequests struct {
	// CloseOn is when the task is closed: opened (once its pull request
	// is open) or merged (once a person merged it); default merged.
	CloseOn string `yaml:"close_on"`
	// Labels are put on every pull request ralph opens.
	Labels []string `yaml:"labels"`
	// Forge is github or gitlab; default: the source's, when it is one
	// of those.
	Forge string `yaml:"forge"`
	// Repo (GitHub, owner/name) or Project (GitLab, group/name) the pull
	// requests are opened in; default: the source's.
	Repo    string `yaml:"repo"`
	Project string `yaml:"project"`
	// APIURL is the forge's API; default: the source's, else the
	// forge's public one.
	APIURL string `yaml:"api_url"`
	// TokenEnv names the environment variable holding the forge's
	// token; default: the source's, else GITHUB_TOKEN or GITLAB_TOKEN.
	TokenEnv string `yaml:"token_env"`
	// PollSeconds is how long ralph first waits between two looks at
	// the pull requests it follows (close_on: merged); each look that
	// finds nothing changed doubles it, up to ten minutes. Default 30.
	PollSeconds int `yaml:"poll_seconds"`
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
	// source; Show, optional, prints one task ($RALPH_TASK_ID) where the
	// list would be run to find it.
	List  string `yaml:"list"`
	Show  string `yaml:"show"`
	Claim string `yaml:"claim"`
	Close string `yaml:"close"`
	Fail  string `yaml:"fail"`
	// Files are the paths, relative to the repository root, that a
	// command source's commands change; none: what each command changed.
	Files []string `yaml:"files"`
	// Repo (github: owner/name), Project (gitlab: group/name or its
	// numeric id) and Team (linear: the team's key) name a forge
	// tracker's backlog.
	Repo    string `yaml:"repo"`
	Project string `yaml:"project"`
	Team    string `yaml:"team"`
	// Labels are the labels an issue must all have to be worked on.
	Labels []string `yaml:"labels"`
	// States are the Linear workflow states an issue must be in
	// (default: the team's unstarted states).
	States []string `yaml:"states"`
	// Assignee is whose issues ralph takes besides unassigned ones, and
	// who it assigns them to; default: the token's user.
	Assignee string `yaml:"assignee"`
	// TokenEnv names the environment variable that holds the API token;
	// the token itself is never in a config file.
	TokenEnv string `yaml:"token_env"`
	// APIURL is the service's API (GitHub Enterprise, a self-hosted
	// GitLab); default: the public service's.
	APIURL string `yaml:"api_url"`
}

// SourceTypes are the task sources ralph knows.
var SourceTypes = []string{"tk", "beads", "prd", "checklist", "command", "github", "gitlab", "linear"}

// ForgeSourceTypes are the sources that are a service's issues rather
// than files or commands in the repository.
var ForgeSourceTypes = []string{"github", "gitlab", "linear"}

// DeliverModes are the ways verified work leaves the machine.
var DeliverModes = []string{"merge", "push", "pr"}

// DefaultPollSeconds is autopilot.pr.poll_seconds when it is not set.
const DefaultPollSeconds = 30

// CloseOnModes are when deliver: pr counts a task done.
var CloseOnModes = []string{"merged", "opened"}

// PRForges are the services deliver: pr opens pull requests on.
var PRForges = []string{"github", "gitlab"}

// PullRequestTarget is autopilot.pr with what it leaves out taken from
// the source when the source is issues of the same forge: its forge,
// repository or project, API and token's variable. Forge is "" when
// neither says (deliver: pr then needs pr.forge).
func (a Autopilot) PullRequestTarget() PullRequests {
	p := a.PR
	if p.Forge == "" && slices.Contains(PRForges, a.Source.Type) {
		p.Forge = a.Source.Type
	}
	if p.Forge != "" && p.Forge == a.Source.Type {
		p.Repo = cmp.Or(p.Repo, a.Source.Repo)
		p.Project = cmp.Or(p.Project, a.Source.Project)
		p.APIURL = cmp.Or(p.APIURL, a.Source.APIURL)
		p.TokenEnv = cmp.Or(p.TokenEnv, a.Source.TokenEnv)
	}
	if p.Forge != "" {
		p.TokenEnv = cmp.Or(p.TokenEnv, DefaultTokenEnv(p.Forge))
	}
	return p
}

// DefaultTokenEnv is the environment variable a forge's token is read
// from when token_env is not set.
func DefaultTokenEnv(forge string) string {
	switch forge {
	case "gitlab":
		return "GITLAB_TOKEN"
	case "linear":
		return "LINEAR_API_KEY"
	}
	return "GITHUB_TOKEN"
}

// MergeModes are the ways finished work reaches the base branch.
var MergeModes = []string{"merge", "rebase", "squash"}

func defaultAutopilot() Autopilot {
	return Autopilot{Source: TaskSource{Type: "tk"}, Parallel: 1, Merge: "merge", Retries: 1, WorktreesDir: ".worktrees",
		Cluster: Cluster{Replicas: 1, Remote: "origin"}, Deliver: "merge", Remote: "origin", PR: PullRequests{CloseOn: "merged", PollSeconds: DefaultPollSeconds}}
}

func (l *loader) autopilot(c *Config) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		c.autopilotSection = true
		l.section(n, path, l.autopilotFields(&c.Autopilot), nil)
		l.checkPullRequests(n, path, c.Autopilot)
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
		{"deliver", l.setChoice(&a.Deliver, DeliverModes)},
		{"remote", l.setString(&a.Remote)},
		{"pr", func(n *yaml.Node, path string) { l.section(n, path, l.pullRequestFields(&a.PR), nil) }},
	}
}

func (l *loader) pullRequestFields(p *PullRequests) []field {
	return []field{
		{"close_on", l.setChoice(&p.CloseOn, CloseOnModes)},
		{"labels", func(n *yaml.Node, path string) { p.Labels, _ = l.stringList(n, path, true) }},
		{"forge", l.setChoice(&p.Forge, PRForges)},
		{"repo", l.setOwnerName(&p.Repo, "owner/name")},
		{"project", l.setString(&p.Project)},
		{"api_url", l.setAPIURL(&p.APIURL)},
		{"token_env", l.setTokenEnv(&p.TokenEnv)},
		{"poll_seconds", l.setAtLeastOne(&p.PollSeconds, "poll_seconds: 60")},
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
		if src.Type != "command" && src.Show != "" {
			l.problem(n, "leave show: out: only a command source runs a command to show a task", "%s: show is for a command source", path)
		}
		if src.Type != "command" && len(src.Files) > 0 {
			l.problem(n, "leave files: out: only a command source's files are unknown to ralph; "+src.Type+" names its own",
				"%s: files is for a command source", path)
		}
		l.checkForgeSource(n, path, src)
		*dst = src
	}
}

// checkPullRequests checks that deliver: pr knows where to open its pull
// requests.
func (l *loader) checkPullRequests(n *yaml.Node, path string, a Autopilot) {
	if a.Deliver != "pr" {
		return
	}
	at := n
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "deliver" {
			at = n.Content[i+1]
		}
	}
	p := a.PullRequestTarget()
	switch {
	case p.Forge == "":
		l.problem(at, "add pr: {forge: github, repo: owner/name} (or gitlab with project:) to autopilot; a github or gitlab source gives its own",
			"%s.deliver: pr, but nothing says which forge opens the pull requests", path)
	case p.Forge == "github" && p.Repo == "":
		l.problem(at, "add pr: {repo: owner/name} to autopilot", "%s.deliver: pr on github needs the repository (pr.repo)", path)
	case p.Forge == "gitlab" && p.Project == "":
		l.problem(at, "add pr: {project: group/name} to autopilot", "%s.deliver: pr on gitlab needs the project (pr.project)", path)
	}
}

// checkForgeSource checks that a forge source names its backlog, and that
// the forge keys are not given to a source that has no use for them.
func (l *loader) checkForgeSource(n *yaml.Node, path string, src TaskSource) {
	need := map[string]struct{ key, value, example string }{
		"github": {"repo", src.Repo, "repo: owner/name"},
		"gitlab": {"project", src.Project, "project: group/name"},
		"linear": {"team", src.Team, "team: ENG"},
	}
	if want, ok := need[src.Type]; ok {
		// A key given but refused has its own problem already.
		if want.value == "" && !hasKey(n, want.key) {
			l.problem(n, "say which backlog, e.g. source: {type: "+src.Type+", "+want.example+", labels: [ralph]}",
				"%s: a %s source needs %s", path, src.Type, want.key)
		}
		return
	}
	if src.Repo != "" || src.Project != "" || src.Team != "" || len(src.Labels) > 0 || len(src.States) > 0 ||
		src.Assignee != "" || src.TokenEnv != "" || src.APIURL != "" {
		l.problem(n, "leave them out, or use type: github, gitlab or linear",
			"%s: repo, project, team, labels, states, assignee, token_env and api_url are for a github, gitlab or linear source, not %s", path, src.Type)
	}
}

// hasKey reports whether the mapping n has key.
func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// setOwnerName decodes a GitHub repository: owner/name.
func (l *loader) setOwnerName(dst *string, example string) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		v, ok := l.str(n, path)
		if !ok {
			return
		}
		owner, name, found := strings.Cut(v, "/")
		if !found || owner == "" || name == "" || strings.Contains(name, "/") {
			l.problem(n, "write the repository as "+example+", e.g. ralph-loop/ralph", "%s: %q is not owner/name", path, v)
			return
		}
		*dst = v
	}
}

// setAPIURL decodes a service's API address: an http or https URL.
func (l *loader) setAPIURL(dst *string) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		v, ok := l.str(n, path)
		if !ok {
			return
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			l.problem(n, "write the API's address, e.g. https://github.example.com/api/v3 or https://gitlab.example.com",
				"%s: %q is not an http or https URL", path, v)
			return
		}
		if u.User != nil {
			l.problem(n, "put the token in the environment variable token_env names, never in the URL",
				"%s: the URL carries credentials", path)
			return
		}
		*dst = v
	}
}

// setTokenEnv decodes the name of the environment variable that holds a
// token. A value that is no such name is most likely the token itself: it
// is refused without being repeated.
func (l *loader) setTokenEnv(dst *string) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		v, ok := l.str(n, path)
		if !ok {
			return
		}
		if !envName.MatchString(v) || len(v) > 64 {
			l.problem(n, "name the environment variable that holds the token (token_env: GITHUB_TOKEN) and export the token in it; a token has no place in a config file",
				"%s is not the name of an environment variable (it may be a token)", path)
			return
		}
		*dst = v
	}
}

func (l *loader) taskSourceFields(s *TaskSource) []field {
	return []field{
		{"type", l.setChoice(&s.Type, SourceTypes)},
		{"path", l.setString(&s.Path)},
		{"list", l.setString(&s.List)},
		{"show", l.setString(&s.Show)},
		{"claim", l.setString(&s.Claim)},
		{"close", l.setString(&s.Close)},
		{"fail", l.setString(&s.Fail)},
		{"files", l.setRepoPaths(&s.Files)},
		{"repo", l.setOwnerName(&s.Repo, "owner/name")},
		{"project", l.setString(&s.Project)},
		{"team", l.setString(&s.Team)},
		{"labels", func(n *yaml.Node, path string) { s.Labels, _ = l.stringList(n, path, true) }},
		{"states", func(n *yaml.Node, path string) { s.States, _ = l.stringList(n, path, true) }},
		{"assignee", l.setString(&s.Assignee)},
		{"token_env", l.setTokenEnv(&s.TokenEnv)},
		{"api_url", l.setAPIURL(&s.APIURL)},
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
