package main

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/view"
)

// One Redactor per command, made here and handed to everything the
// command writes, serves or passes on: the loop's engine and backends, the
// autopilot and its trackers, a worker, and the readers of a workspace
// (events, watch, serve, mcp, memory).

// newRedactor is redactorOf(cfg), with a warning for each variable listed
// under redact: whose value is too short to hide.
func newRedactor(g *globals, cfg *config.Config) *redact.Redactor {
	r := redactorOf(cfg)
	for _, name := range r.TooShort() {
		fmt.Fprintf(g.stderr, "ralph: warning: redact: %s is shorter than %d bytes, so ralph does not hide it (it would hide every occurrence of so short a string)\n",
			name, redact.MinLength)
	}
	return r
}

// redactorOf hides the values of ralph's own secret-looking variables, of
// those a ralph that started this one lists in RALPH_REDACT, and with a
// config, of those in any backend's env: and those listed under redact:.
func redactorOf(cfg *config.Config) *redact.Redactor {
	env := os.Environ()
	var names []string
	if v := os.Getenv(redact.NamesVar); v != "" {
		names = strings.Split(v, ",")
	}
	if cfg == nil {
		return redact.New(env, names)
	}
	add := func(c config.CLI) {
		for name, value := range c.Env {
			env = append(env, name+"="+value)
		}
	}
	add(cfg.CLI)
	for _, h := range cfg.Hats {
		if h.Backend != nil {
			add(*h.Backend)
		}
	}
	return redact.New(env, append(append(names, cfg.Redact...), tokenEnvs(cfg.Autopilot)...))
}

// tokenEnvs are the variables the autopilot's forge source and pull
// requests read their tokens from: secret whatever they are called.
func tokenEnvs(a config.Autopilot) []string {
	var names []string
	if slices.Contains(config.ForgeSourceTypes, a.Source.Type) {
		names = append(names, cmp.Or(a.Source.TokenEnv, config.DefaultTokenEnv(a.Source.Type)))
	}
	if p := a.PullRequestTarget(); a.Deliver == "pr" && p.TokenEnv != "" {
		names = append(names, p.TokenEnv)
	}
	return names
}

// readerRedactor is the Redactor of a command that reads what runs in the
// workspace dir and shows it: the environment's, and the workspace's
// config's when it has one that loads. A missing or broken config is no
// reason not to show a run: the environment's secrets are still hidden.
func readerRedactor(dir string) *redact.Redactor {
	cfg, _, err := config.LoadFiles(dir, nil, configOptions(nil))
	if err != nil {
		cfg = nil
	}
	return redactorOf(cfg)
}

// redactedError is an error whose text and hint went through a Redactor,
// for the terminal; its chain is kept, so errors.Is, errors.As and its
// exit status still see what it wraps.
type redactedError struct {
	err        error
	text, hint string
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }
func (e *redactedError) Hint() string  { return e.hint }

// redactErr is err with the secret values in its text and hint hidden; err
// itself when there is none.
func redactErr(r *redact.Redactor, err error) error {
	if err == nil || r.Empty() {
		return err
	}
	text, hint := r.String(err.Error()), r.String(view.HintOf(err))
	if text == err.Error() && hint == view.HintOf(err) {
		return err
	}
	return &redactedError{err: err, text: text, hint: hint}
}
