package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/config"
)

type configCmd struct {
	Show configShowCmd `cmd:"" help:"Print the merged configuration a loop would run with; --explain says where each value came from."`
}

func (configCmd) Help() string {
	return `A loop's configuration is layered, each layer over the one before:

  default        what ralph uses when no layer sets a key
  user config    $XDG_CONFIG_HOME/ralph/config.yml (else ~/.config/ralph/config.yml;
                 on macOS ~/Library/Application Support/ralph/config.yml, on
                 Windows %AppData%\ralph\config.yml), for your own defaults
  project files  ./ralph.yml, or the -c files in order
  -H collection  its hats and event_loop: (its other sections lie under the files)
  --set          key.path=value on ralph loop and ralph autopilot, in order

Examples:
  ralph config show
  ralph config show --explain
  ralph config show -c ralph.yml -c ci.yml --set event_loop.max_iterations=5 --explain
  ralph config show --json | jq .config.cli`
}

type configShowCmd struct {
	Config  []string `short:"c" placeholder:"FILE" help:"Config file (default ./ralph.yml). Repeat to merge: later files win."`
	Hats    string   `short:"H" placeholder:"FILE|NAME" help:"Hat collection laid over the config: a preset name (ralph init --list) or a file with hats: and optionally event_loop:."`
	Set     []string `placeholder:"KEY=VALUE" help:"Set a config key over the files, as ralph loop --set does. Repeatable."`
	Explain bool     `help:"Say where each value came from: file:line, the user config's file:line, --set KEY, or default."`
	JSON    bool     `name:"json" help:"Print one JSON object: config (the merged configuration) and, with --explain, values (each key's value and where it came from)."`
}

func (configShowCmd) Help() string {
	return `Prints the configuration ralph loop would run with here: the defaults, the
user config, the project's files, a hat collection and --set, merged (see
ralph config --help). The values of environment variables whose names look
secret (cli.env, a hat backend's env) are hidden, and nothing is expanded:
a token_env names a variable and is printed as that name.

Without a ralph.yml (and no -c) it prints what a loop run with -p would use:
the defaults, the user config and --set.

Output: YAML; with --explain each value is followed by a comment saying where
it came from. With --json one JSON object, {"config": {…}}, and with --explain
also "values": [{"path", "value", "kind" (file, user, set or default), "file",
"line"}], in the order of the YAML. A config that does not load is an error
(exit 3) on stderr, and nothing is printed on stdout.

Examples:
  ralph config show
  ralph config show --explain
  ralph config show --set cli.backend=codex --explain
  ralph config show --json --explain | jq '.values[] | select(.kind == "user")'`
}

// configShowJSON is what config show --json prints.
type configShowJSON struct {
	Config any            `json:"config"`
	Values []config.Value `json:"values,omitempty"`
}

func (c *configShowCmd) Run(g *globals) error {
	cfg, _, err := loadConfigWith(g.Dir, c.Config, c.Hats, c.Set)
	if errors.Is(err, config.ErrNotFound) && len(c.Config) == 0 && c.Hats == "" {
		cfg, err = config.LoadOver(configOptions(c.Set))
	}
	if err != nil {
		return err
	}
	where := func(file string) string { return relativeTo(g.Dir, file) }
	redactor := redactorOf(cfg)
	if !c.JSON {
		_, err := fmt.Fprint(g.stdout, redactor.String(string(cfg.ExplainedYAML(c.Explain, where))))
		return err
	}
	var out configShowJSON
	if err := yaml.Unmarshal(cfg.ExplainedYAML(false, nil), &out.Config); err != nil {
		return fmt.Errorf("read back the merged config: %w", err)
	}
	if c.Explain {
		out.Values = cfg.Explain()
		for i, v := range out.Values {
			if v.Kind == config.FromFile || v.Kind == config.FromUser {
				out.Values[i].File = where(v.File)
			}
		}
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(g.stdout, redactor.String(string(data)))
	return err
}
