package backends

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/procgroup"
	"github.com/ralph-loop/ralph/internal/suggest"
)

// DiagnoseOptions say how to look at one backend; the zero value looks at
// the CLI as installed on PATH, in ralph's own environment.
type DiagnoseOptions struct {
	// Command overrides the binary, as cli.command does.
	Command string
	// Env is what cli.env adds to the agent's environment; its variables
	// count as auth settings too.
	Env map[string]string
	// VersionTimeout bounds `<binary> --version`; zero means 10 seconds.
	VersionTimeout time.Duration
	// SkipVersion leaves the version out (no process is started).
	SkipVersion bool
	// Getenv and Home stand in for os.Getenv and os.UserHomeDir in tests.
	Getenv func(string) string
	Home   string
}

// Diagnosis is what ralph doctor says about one backend. It never holds a
// secret: auth settings are named, never shown.
type Diagnosis struct {
	Name string `json:"name"`
	// Binary is what was looked up: a name on PATH or cli.command.
	Binary string `json:"binary"`
	Found  bool   `json:"found"`
	Path   string `json:"path,omitempty"`
	// Problem says why the backend cannot run, with how to fix it.
	Problem string `json:"problem,omitempty"`
	// Version is the first line `<binary> --version` printed; VersionError
	// says why there is none.
	Version      string `json:"version,omitempty"`
	VersionError string `json:"version_error,omitempty"`
	// Auth lists the settings found that the CLI would authenticate with.
	Auth []AuthSetting `json:"auth"`
	// AuthHint is how to log in or which variable to set.
	AuthHint string `json:"auth_hint,omitempty"`
}

// AuthSetting is one place a CLI finds credentials: an environment variable
// or a file. Only its presence is reported.
type AuthSetting struct {
	Kind   string `json:"kind"`             // "env" or "file"
	Name   string `json:"name"`             // the variable, or the file's path
	Detail string `json:"detail,omitempty"` // what it is, e.g. "Claude Code login"
}

// defaultVersionTimeout bounds a version probe. Most CLIs answer within a
// few seconds; Copilot CLI unpacks itself on its first run (10 s was seen).
const defaultVersionTimeout = 10 * time.Second

// Diagnose looks at one backend: is its binary there, which version is it,
// and which auth settings would it use. An unknown name is an
// *UnknownBackendError; everything else is reported in the Diagnosis.
func Diagnose(name string, opts DiagnoseOptions) (Diagnosis, error) {
	spec, ok := clis[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return Diagnosis{}, unknownBackend(name)
	}
	env := newDiagEnv(opts)
	d := Diagnosis{Name: spec.name, Binary: opts.Command, Auth: []AuthSetting{}}
	if d.Binary == "" {
		d.Binary = spec.binary
	}
	if a, ok := authSpecs[spec.name]; ok {
		d.Auth = a.find(env)
		d.AuthHint = a.hint
	}
	if d.Binary == "" { // the command backend without cli.command
		d.Problem = "backend command needs the program to run; set cli.command"
		return d, nil
	}
	b := &Backend{spec: spec, opts: Options{Name: spec.name, Command: opts.Command}}
	path, err := b.resolve()
	if err != nil {
		d.Problem = err.Error()
		return d, nil
	}
	d.Found, d.Path = true, path
	if !opts.SkipVersion && spec.name != nameCommand {
		d.Version, d.VersionError = probeVersion(path, versionEnv(spec, opts), opts.VersionTimeout)
	}
	return d, nil
}

func unknownBackend(name string) error {
	known := append(Names(), nameAuto, nameCustom)
	slices.Sort(known)
	return &UnknownBackendError{Name: name, Known: known, Suggestion: suggest.Closest(name, known)}
}

// versionEnv is the environment a real run would add (the CLI's own
// unattended settings, such as Copilot's COPILOT_AUTO_UPDATE=false, then
// cli.env), so the probe behaves like the agent.
func versionEnv(spec *cliSpec, opts DiagnoseOptions) []string {
	var env []string
	if spec.env != nil {
		env = append(env, spec.env(Options{Name: spec.name})...)
	}
	for _, k := range slices.Sorted(maps.Keys(opts.Env)) {
		env = append(env, k+"="+opts.Env[k])
	}
	return env
}

// probeVersion runs `path --version` with stdin from /dev/null, in its own
// process group so that a CLI that hangs is killed with its children, and
// returns the first non-blank line of stdout (stderr when stdout is empty:
// Codex warns on stderr before its version on stdout).
func probeVersion(path string, env []string, timeout time.Duration) (version, problem string) {
	if timeout <= 0 {
		timeout = defaultVersionTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.Command(path, "--version")
	cmd.Env = append(os.Environ(), env...)
	// A process it left holding the output pipes does not hold Wait longer.
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// No grace: a probe that does not answer in time is killed outright,
	// and so is whatever it left running, in its group or not.
	g, err := procgroup.Start(cmd, 0)
	if err == nil {
		_, err = g.Wait(ctx)
		_ = g.EnsureGone(nil)
	}
	line := firstLine(stdout.Bytes())
	if line == "" {
		line = firstLine(stderr.Bytes())
	}
	switch {
	case ctx.Err() != nil:
		return "", fmt.Sprintf("`%s --version` did not answer within %s", filepath.Base(path), timeout)
	case err != nil && line != "":
		return "", fmt.Sprintf("`%s --version` failed (%v): %s", filepath.Base(path), err, line)
	case err != nil:
		return "", fmt.Sprintf("`%s --version` failed: %v", filepath.Base(path), err)
	case line == "":
		return "", fmt.Sprintf("`%s --version` printed nothing", filepath.Base(path))
	}
	return line, ""
}

func firstLine(b []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			return lastLine(line) // bounded in length
		}
	}
	return ""
}

// diagEnv answers where a CLI's settings live: variables from cli.env or
// ralph's environment, and paths under the home folder.
type diagEnv struct {
	extra  map[string]string
	getenv func(string) string
	home   string
}

func newDiagEnv(opts DiagnoseOptions) diagEnv {
	e := diagEnv{extra: opts.Env, getenv: opts.Getenv, home: opts.Home}
	if e.getenv == nil {
		e.getenv = os.Getenv
	}
	if e.home == "" {
		e.home, _ = os.UserHomeDir()
	}
	return e
}

// get is a variable as the agent would see it: cli.env wins.
func (e diagEnv) get(key string) string {
	if v, ok := e.extra[key]; ok {
		return v
	}
	return e.getenv(key)
}

// dir is the folder a variable names, or def under the home folder.
func (e diagEnv) dir(envVar string, def ...string) string {
	if envVar != "" {
		if v := e.get(envVar); v != "" {
			return v
		}
	}
	return filepath.Join(append([]string{e.home}, def...)...)
}

// authSpec is where one CLI looks for credentials.
type authSpec struct {
	env   []authVar
	files func(e diagEnv) []authFile
	hint  string
}

type authVar struct{ name, detail string }

type authFile struct {
	path, detail string
	// describe, when set, adds to the detail what the file says without
	// quoting a secret (a login method, provider names).
	describe func(data []byte) string
}

// find lists the settings that are present.
func (a authSpec) find(e diagEnv) []AuthSetting {
	found := []AuthSetting{}
	for _, v := range a.env {
		if e.get(v.name) != "" {
			found = append(found, AuthSetting{Kind: "env", Name: v.name, Detail: v.detail})
		}
	}
	if a.files == nil {
		return found
	}
	for _, f := range a.files(e) {
		data, err := os.ReadFile(f.path)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				found = append(found, AuthSetting{Kind: "file", Name: f.path, Detail: f.detail + " (unreadable: " + pathError(err) + ")"})
			}
			continue
		}
		detail := f.detail
		if f.describe != nil {
			if more := f.describe(data); more != "" {
				detail += ", " + more
			}
		}
		found = append(found, AuthSetting{Kind: "file", Name: f.path, Detail: detail})
	}
	return found
}

func pathError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
