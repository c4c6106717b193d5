package cluster

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/criteria"
)

// ValidateConfigs checks a task's config files as `ralph loop` checks
// local ones (an unknown key is refused, with its file and line), and
// refuses a backend command given by a relative path: on the coordinator
// it named a file beside its config, which the worker does not have.
func ValidateConfigs(files []ConfigFile) error {
	cfg, err := loadConfigs(files)
	if err != nil {
		return err
	}
	if rel := cfg.RelativeCommands(); len(rel) > 0 {
		return fmt.Errorf("the backend command %s is a path relative to the coordinator's config, which a worker cannot follow: "+
			"name a command on the workers' PATH (claude) or an absolute path that exists on every worker", strings.Join(rel, ", "))
	}
	return nil
}

func loadConfigs(files []ConfigFile) (*config.Config, error) {
	if len(files) == 0 {
		return nil, errors.New("no config file")
	}
	layers := make([]config.Layer, len(files))
	for i, f := range files {
		layers[i] = config.Layer{Name: f.Name, Data: f.Data}
	}
	return config.LoadLayers(layers...)
}

// taskCommandsOverlay is a config file that gives t's loop the acceptance
// criteria of its config files followed by the task's own commands: a
// later file's acceptance_criteria replace an earlier one's.
func taskCommandsOverlay(t Task) ([]byte, error) {
	cfg, err := loadConfigs(t.Configs)
	if err != nil {
		return nil, err
	}
	specs := append([]criteria.Spec{}, cfg.AcceptanceCriteria...)
	for _, c := range t.TaskCommands {
		specs = append(specs, criteria.Spec{Type: criteria.TypeCommandSucceeds, Command: c.Command, Name: c.Name})
	}
	body, err := yaml.Marshal(map[string]any{"acceptance_criteria": specs})
	if err != nil {
		return nil, err
	}
	head := "# Written by ralph worker for task " + t.ID + ": its config's acceptance criteria and the task's own commands.\n"
	return append([]byte(head), body...), nil
}
