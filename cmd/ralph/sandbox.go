package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/criteria"
	workspacegit "github.com/ralph-loop/ralph/internal/git"
	"github.com/ralph-loop/ralph/internal/sandbox"
	"github.com/ralph-loop/ralph/view"
)

// sandboxSupport is what ralph doctor says of this machine's sandboxes.
func sandboxSupport() view.SandboxSupport {
	s := sandbox.Detect()
	auto, warning, err := s.Resolve(sandbox.ModeAuto, sandbox.NetworkAllow)
	if err != nil {
		warning = err.Error()
	}
	return view.SandboxSupport{Mechanisms: s.Report(), Auto: string(auto), Warning: warning}
}

// confiner turns the config's sandbox sections into each backend's
// confinement, looking at what the machine supports once, and only when a
// section asks for a sandbox.
type confiner struct {
	launcher string // the ralph binary, re-executed to apply Landlock
	stderr   io.Writer
	// pin is where the workspace's repository is when ralph made the
	// worktree (gitPin): what of it a confined agent may write is found
	// from there.
	pin     workspacegit.Pin
	support *sandbox.Support
	// probed says support's NetNamespace was probed: it is only for
	// network: deny, the one setting that needs it (sandbox.DetectFor).
	probed bool
	// warnings are what it printed, once each, for the headless stream.
	warnings []string
}

// agent is the confinement of a backend configured with s: nil when s
// asks for none. A mode this machine cannot give is an error that says
// where it was asked for; auto without any mechanism here runs the agent
// unconfined with a warning (recorded as "off").
func (c *confiner) agent(s config.Sandbox) (*sandbox.Agent, error) {
	if c == nil || s.Mode == "" || s.Mode == string(sandbox.ModeOff) {
		return nil, nil
	}
	c.detect(sandbox.Network(s.Network))
	mode, warning, err := c.support.Resolve(sandbox.Mode(s.Mode), sandbox.Network(s.Network))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", placeOf(c.refused(s)), err)
	}
	if warning != "" {
		c.warn(warning)
	}
	home, _ := os.UserHomeDir()
	return &sandbox.Agent{Mode: mode, Home: home, Launcher: c.launcher, Write: envWritable(),
		GitDir: c.pin.GitDir, GitCommonDir: c.pin.CommonDir, Policy: sandbox.Policy{
			Mode: sandbox.Mode(s.Mode), Write: s.Write, DenyRead: s.DenyRead, Network: sandbox.Network(s.Network)}}, nil
}

// detect looks at what the machine supports once, and once more when a
// section asks for network: deny after one that did not.
func (c *confiner) detect(network sandbox.Network) {
	deny := network == sandbox.NetworkDeny
	if c.support != nil && (c.probed || !deny) {
		return
	}
	support := sandbox.DetectFor(network)
	c.support, c.probed = &support, deny
}

// agentSandboxes are how each hat's agent is confined, the loop's default
// under "": nil (or mode off) where it is not.
type agentSandboxes map[string]*sandbox.Agent

// checks is engine.Options.CheckSandbox: the criteria and gates checked on
// a hat's work run confined as its agent was (without the agent CLI's own
// state, which a test suite has no business writing), in the workspace.
// They run what the agent wrote: a test that writes ~/.bashrc is the
// agent's write, whoever starts it.
func (s agentSandboxes) checks(workspace string) func(hat string) criteria.Sandbox {
	return func(hat string) criteria.Sandbox {
		a, ok := s[hat]
		if !ok {
			a = s[""]
		}
		if a == nil || a.Mode == sandbox.ModeOff || a.Mode == "" {
			return nil
		}
		check := *a
		check.Workspace, check.State = workspace, nil
		return check
	}
}

// gitPin is the Pin an autopilot or a worker hands the loop it starts in a
// worktree it made (workspacegit.PinGitDirEnv, PinCommonDirEnv), taken out
// of the environment so that what the loop starts does not inherit it;
// the zero Pin when there is none. A half or broken one is refused: ralph
// would otherwise find the repository through the files the agent writes.
func gitPin() (workspacegit.Pin, error) {
	dir, hasDir := os.LookupEnv(workspacegit.PinGitDirEnv)
	common, hasCommon := os.LookupEnv(workspacegit.PinCommonDirEnv)
	_ = os.Unsetenv(workspacegit.PinGitDirEnv)
	_ = os.Unsetenv(workspacegit.PinCommonDirEnv)
	if !hasDir && !hasCommon {
		return workspacegit.Pin{}, nil
	}
	pin := workspacegit.Pin{GitDir: dir, CommonDir: common}
	if err := pin.Check(); err != nil {
		return workspacegit.Pin{}, withHint(fmt.Errorf("the worktree's repository, as ralph was told it: %w", err),
			"the autopilot and `ralph worker` set "+workspacegit.PinGitDirEnv+" and "+workspacegit.PinCommonDirEnv+
				" for the loops they start, both at once; unset them to run `ralph loop` by hand")
	}
	return pin, nil
}

// refused is where the key that this machine cannot honour was set: the
// network's when the mode alone could be had, else the mode's.
func (c *confiner) refused(s config.Sandbox) string {
	if _, _, err := c.support.Resolve(sandbox.Mode(s.Mode), sandbox.NetworkAllow); err == nil && s.Source("network") != "" {
		return s.Source("network")
	}
	return s.Source("mode")
}

func (c *confiner) warn(msg string) {
	if slices.Contains(c.warnings, msg) {
		return
	}
	c.warnings = append(c.warnings, msg)
	fmt.Fprintf(c.stderr, "ralph: warning: %s\n", msg)
}

// checkSandbox refuses an autopilot whose slots' sandbox (or a hat's) this
// machine cannot give, before any task starts, and says once when auto
// finds nothing to confine them with; each task's loop would say it again.
// It returns the slots' confinement, nil when they run unconfined.
func (c *autopilotRunCmd) checkSandbox(g *globals, cfg *config.Config, ralphBin string) (*sandbox.Agent, error) {
	conf := &confiner{launcher: ralphBin, stderr: g.stderr}
	slots := cfg.SlotSandbox()
	agent, err := conf.agent(slots)
	if err != nil {
		return nil, err
	}
	for _, h := range cfg.Hats {
		if h.Sandbox == nil {
			continue
		}
		if _, err := conf.agent(slots.ForHat(h)); err != nil {
			return nil, fmt.Errorf("hat %s: %w", h.ID, err)
		}
	}
	return agent, nil
}

// verifySandbox is autopilot.Options.VerifySandbox: autopilot.verify runs
// the merged result's tests, the slots' agents' code, so it runs confined
// as the slots are, in the merge's scratch worktree.
func verifySandbox(slots *sandbox.Agent) func(dir string, pin workspacegit.Pin) criteria.Sandbox {
	if slots == nil || slots.Mode == sandbox.ModeOff {
		return nil
	}
	return func(dir string, pin workspacegit.Pin) criteria.Sandbox {
		check := *slots
		check.Workspace, check.GitDir, check.GitCommonDir = dir, pin.GitDir, pin.CommonDir
		return check
	}
}

// sandbox is how the worker's loops confine their agents: its own
// configs' sandbox for the autopilot's slots (auto unless they say
// otherwise), --sandbox over its mode. A mode this machine cannot give
// stops the worker before it takes a task.
func (c *workerCmd) sandbox(g *globals, ralphBin string) (config.Sandbox, error) {
	cfg := config.Default()
	if len(c.Configs) > 0 {
		loaded, err := config.Load(c.Configs...)
		if err != nil {
			return config.Sandbox{}, err
		}
		cfg = loaded
	}
	s := cfg.SlotSandbox()
	if c.Sandbox != "" && !slices.Contains(config.SandboxModes, c.Sandbox) {
		return config.Sandbox{}, withHint(fmt.Errorf("--sandbox %q: no such mode", c.Sandbox),
			"pass one of: "+strings.Join(config.SandboxModes, ", ")+" (auto picks the strongest this machine has; ralph doctor says which)")
	}
	if c.Sandbox != "" {
		s = s.WithMode(c.Sandbox, "--sandbox")
	}
	conf := &confiner{launcher: ralphBin, stderr: g.stderr}
	if _, err := conf.agent(s); err != nil {
		return config.Sandbox{}, err
	}
	return s, nil
}

// SandboxWriteEnv names more paths every confined agent may write,
// separated as PATH is: what a machine's owner adds for all its runs (a CI
// cache, say) without a config file's say. An agent cannot set it: it is
// ralph's environment, read before the agent starts.
const SandboxWriteEnv = "RALPH_SANDBOX_WRITE"

// envWritable are the absolute paths of SandboxWriteEnv.
func envWritable() []string {
	var out []string
	for _, p := range filepath.SplitList(os.Getenv(SandboxWriteEnv)) {
		if filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}

// placeOf is where a sandbox key was set, as config errors say it
// (FILE:LINE, or a flag), from config.Sandbox.Source's "key (FILE:LINE)";
// the default when it was not set.
func placeOf(source string) string {
	if source == "" {
		return "the default sandbox of autopilot slots and workers (auto)"
	}
	if i := strings.LastIndex(source, " ("); i >= 0 && strings.HasSuffix(source, ")") {
		return source[i+2 : len(source)-1]
	}
	return source
}
