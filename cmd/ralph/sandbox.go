package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/config"
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
	support  *sandbox.Support
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
	if c.support == nil {
		support := sandbox.Detect()
		c.support = &support
	}
	mode, warning, err := c.support.Resolve(sandbox.Mode(s.Mode), sandbox.Network(s.Network))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", placeOf(c.refused(s)), err)
	}
	if warning != "" {
		c.warn(warning)
	}
	home, _ := os.UserHomeDir()
	return &sandbox.Agent{Mode: mode, Home: home, Launcher: c.launcher, Write: envWritable(), Policy: sandbox.Policy{
		Mode: sandbox.Mode(s.Mode), Write: s.Write, DenyRead: s.DenyRead, Network: sandbox.Network(s.Network)}}, nil
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
func (c *autopilotRunCmd) checkSandbox(g *globals, cfg *config.Config, ralphBin string) error {
	conf := &confiner{launcher: ralphBin, stderr: g.stderr}
	slots := cfg.SlotSandbox()
	if _, err := conf.agent(slots); err != nil {
		return err
	}
	for _, h := range cfg.Hats {
		if h.Sandbox == nil {
			continue
		}
		if _, err := conf.agent(slots.ForHat(h)); err != nil {
			return fmt.Errorf("hat %s: %w", h.ID, err)
		}
	}
	return nil
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
