// Package sandbox confines an agent process so that it can write only its
// workspace (and the few places its CLI needs) and read no secrets, enforced
// by the kernel: Landlock on Linux (applied by ralph itself, re-executed as a
// small launcher before the agent's exec), bubblewrap where Landlock is
// missing or too old, Seatbelt (sandbox-exec) on macOS.
//
// A Policy is what the user configured; Detect says what this machine offers
// (Support) and Support.Resolve turns a Policy's mode into the mechanism a
// run uses. An Agent is one agent run's confinement: Confine rewrites an
// unstarted *exec.Cmd so that it runs confined. The launcher re-executes
// any command, not only an agent: ralph confines the commands of criteria,
// gates and autopilot.verify with the Agent of the agent whose work they
// run (its Workspace the check's), and Denied explains their refusals too.
//
// Of a linked worktree's repository an Agent grants the worktree's own git
// directory, the object store and its branch's ref directories: found from
// Agent.GitDir and GitCommonDir when ralph made the worktree, else from the
// worktree's files only when laid out as git lays them out, since an
// earlier agent can rewrite them to name any directory.
package sandbox

import (
	"os/exec"
	"path/filepath"
	"strings"
)

// Mode says how an agent is confined.
type Mode string

// The modes a user can configure; auto picks the strongest the machine has.
const (
	ModeOff      Mode = "off"
	ModeAuto     Mode = "auto"
	ModeLandlock Mode = "landlock"
	ModeBwrap    Mode = "bwrap"
	ModeSeatbelt Mode = "seatbelt"
)

// Modes lists the modes, in the order the docs give them.
var Modes = []Mode{ModeOff, ModeAuto, ModeLandlock, ModeBwrap, ModeSeatbelt}

// Network says whether a confined agent may reach the network.
type Network string

// The network settings: deny leaves only loopback.
const (
	NetworkAllow Network = "allow"
	NetworkDeny  Network = "deny"
)

// Policy is a sandbox: section of ralph.yml, its paths absolute.
type Policy struct {
	Mode Mode
	// Write are extra writable paths (directories or files).
	Write []string
	// DenyRead are extra paths no agent may read, beyond DefaultDenyRead.
	// A denied path that is, or lies inside, a writable one stays
	// readable: Landlock cannot take away part of a tree it grants, and
	// the other mechanisms do the same so that a policy means one thing
	// everywhere.
	DenyRead []string
	Network  Network
}

// Denies says whether the policy leaves the agent no network but loopback.
func (p Policy) Denies() bool { return p.Network == NetworkDeny }

// Support is what this machine offers.
type Support struct {
	// LandlockABI is the kernel's Landlock ABI version; 0 when it has none.
	LandlockABI int
	// Bwrap is the path of bubblewrap; "" when it is not installed.
	Bwrap string
	// SandboxExec is the path of macOS's sandbox-exec; "" elsewhere.
	SandboxExec string
	// NetNamespace says a confined agent can be given a network namespace
	// of its own (network: deny under Landlock).
	NetNamespace bool
}

// Agent is one agent run's confinement.
type Agent struct {
	// Mode is the mechanism, resolved: never auto. Off confines nothing.
	Mode Mode
	// Policy is what the user configured (its Mode is ignored here).
	Policy Policy
	// Workspace is the agent's working directory, always writable.
	Workspace string
	// Home is the user's home directory, for the default denied paths.
	Home string
	// State are the agent CLI's own state directories and files
	// (~/.claude, ~/.claude.json, …), always writable. A missing one
	// under Home is made as a directory unless its name has an extension
	// after its leading dot (.claude.json is a file, left to the CLI; it
	// cannot create it when its directory is not writable).
	State []string
	// Write are more writable paths ralph itself needs (a usage file's
	// folder, say).
	Write []string
	// Launcher is the ralph binary re-executed to apply Landlock: one
	// whose main hands LauncherArg to Launch. Landlock needs it.
	Launcher string
	// GitDir and GitCommonDir, when set, are where the repository of a
	// workspace that is a linked worktree is, as ralph knows it from
	// having made the worktree (internal/git's Pin): what is granted of
	// it is found from them, not from the workspace's .git file and the
	// commondir file beside the git directory, which the agent can
	// rewrite to name any directory it wants granted.
	GitDir, GitCommonDir string
}

// Confine rewrites cmd, not yet started, to run confined: its Path, Args,
// Env (TMPDIR and the like point at a private temporary directory) and
// SysProcAttr (kept, with what the mechanism adds). cleanup removes what
// Confine made (the private temporary directory) and must be called once
// the command has exited. A Mode of off returns cmd untouched.
//
// Under Landlock cmd runs the Launcher, which execs the agent in place (the
// same pid); with network: deny it gets a network namespace of its own
// through SysProcAttr (and a user namespace when ralph is not root).
// Under bwrap and Seatbelt cmd runs bwrap or sandbox-exec, which run the
// agent as their child.
func (a Agent) Confine(cmd *exec.Cmd) (cleanup func(), err error) {
	return confine(a, cmd)
}

// Detect says everything this machine offers, for ralph doctor: where
// Landlock is there it starts a process to probe for the network
// namespace, whatever an earlier run recorded, and records the answer in
// the user's cache for DetectFor.
func Detect() Support { return detect(netnsProbed) }

// DetectFor says what this machine offers a run whose policy sets network.
// The network namespace is looked for only for deny, the one setting whose
// resolution reads Support.NetNamespace (with allow it is left false), so
// a loop, which keeps the network unless configured otherwise, starts no
// process for it. For deny a success recorded in the user's cache by the
// same ralph binary, under the same kernel, boot and user, answers without
// a probe; only success is recorded, and a wrong one fails closed: the
// agent's launcher cannot start, and nothing runs unconfined.
func DetectFor(network Network) Support {
	if network != NetworkDeny {
		return detect(netnsSkip)
	}
	return detect(netnsCached)
}

// Resolve turns a configured mode into the mechanism a run uses: auto into
// the strongest available (Landlock, then bubblewrap, then Seatbelt on
// macOS), or off with a warning (the second result) when there is none; an
// explicit mode this machine cannot give (or network: deny that it cannot
// enforce) is an error that says why and how to fix it.
func (s Support) Resolve(mode Mode, network Network) (Mode, string, error) {
	return s.resolve(mode, network)
}

// Report says, one line each, what this machine supports, for ralph doctor.
func (s Support) Report() []string { return s.report() }

// defaultDenyRead are the secrets a developer's home typically holds, as
// paths relative to it: keys (ssh, gpg, the password store, the desktop's
// keyrings), cloud and cluster credentials (AWS, Google Cloud, Azure,
// Kubernetes, Docker's registry logins), forge tokens (gh, hub, git's
// credential store, netrc) and package registries' upload tokens (npm,
// PyPI, RubyGems, crates.io). Configuration that tools need to run
// (~/.gitconfig, ~/.config/git) is not among them.
var defaultDenyRead = []string{
	".ssh",
	".gnupg",
	".password-store",
	".local/share/keyrings",
	".aws",
	".config/gcloud",
	".azure",
	".kube",
	".docker/config.json",
	".config/gh",
	".config/hub",
	".git-credentials",
	".netrc",
	".npmrc",
	".pypirc",
	".gem/credentials",
	".cargo/credentials",
	".cargo/credentials.toml",
	".vault-token",
}

// DefaultDenyRead are the paths under home no agent may read unless the user
// says otherwise: ~/.ssh, ~/.aws, ~/.gnupg, ~/.config/gh, ~/.netrc and the
// like (see defaultDenyRead for the whole list and why). An empty home
// denies nothing: there is no home to find them in.
func DefaultDenyRead(home string) []string {
	if home == "" {
		return nil
	}
	out := make([]string, len(defaultDenyRead))
	for i, rel := range defaultDenyRead {
		out[i] = filepath.Join(home, filepath.FromSlash(rel))
	}
	return out
}

// String describes the confinement for records and views: "landlock",
// "bwrap, network deny", "off".
func (a Agent) String() string {
	if a.Mode == "" || a.Mode == ModeOff {
		return string(ModeOff)
	}
	parts := []string{string(a.Mode)}
	if a.Policy.Denies() {
		parts = append(parts, "network deny")
	}
	return strings.Join(parts, ", ")
}

// LauncherArg is the first argument of ralph re-executed as the Landlock
// launcher; main hands such a process to Launch before anything else.
const LauncherArg = "__sandbox-exec"

// Launch is the launcher's main: it applies the confinement its arguments
// describe and execs the agent. It never returns: it exits with status 126
// and a message on stderr when it cannot confine or exec.
func Launch(args []string) { launch(args) }

// Denied finds, in an agent's error text, an access the sandbox refused
// (a write outside the writable paths, a read of a denied one) and says so
// in a sentence for the iteration's failure message; "" when there is none.
func (a Agent) Denied(text string) string { return denied(a, text) }
