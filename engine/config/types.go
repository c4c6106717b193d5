package config

// Config is a loaded ralph.yml (or ralph.json), defaults applied.
type Config struct {
	EventLoop EventLoop
	CLI       CLI
	// Hats in the order they appear in the file.
	Hats []Hat
	// Path is the file the config came from (the last, when merged).
	Path string
	// Warnings are things a user should know but that do not stop a run,
	// such as keys ralph accepts without implementing.
	Warnings []string
}

// EventLoop is the event_loop: section.
type EventLoop struct {
	Prompt                  string   `yaml:"prompt"`
	PromptFile              string   `yaml:"prompt_file"`              // default PROMPT.md
	CompletionPromise       string   `yaml:"completion_promise"`       // default LOOP_COMPLETE
	StartingEvent           string   `yaml:"starting_event"`           // default task.start
	MaxIterations           int      `yaml:"max_iterations"`           // default 100
	MaxRuntimeSeconds       int      `yaml:"max_runtime_seconds"`      // default 14400
	MaxCostUSD              float64  `yaml:"max_cost_usd"`             // 0: none
	MaxConsecutiveFailures  int      `yaml:"max_consecutive_failures"` // default 5
	CooldownDelaySeconds    int      `yaml:"cooldown_delay_seconds"`   // default 0
	RequiredEvents          []string `yaml:"required_events"`
	CancellationPromise     string   `yaml:"cancellation_promise"`
	EnforceHatScope         bool     `yaml:"enforce_hat_scope"`
	CompletionConfirmations int      `yaml:"completion_confirmations"`  // default 2
	IterationTimeoutSeconds int      `yaml:"iteration_timeout_seconds"` // default 1800
	IdleTimeoutSeconds      int      `yaml:"idle_timeout_seconds"`      // default 600
	KillGraceSeconds        int      `yaml:"kill_grace_seconds"`        // default 10
}

// CLI is the cli: section, and the shape of a hat's backend: override.
type CLI struct {
	Backend    string            `yaml:"backend"` // claude | command (custom is an alias of command)
	Command    string            `yaml:"command"`
	Args       []string          `yaml:"args"`
	PromptMode string            `yaml:"prompt_mode"` // arg | stdin
	PromptFlag string            `yaml:"prompt_flag"`
	Env        map[string]string `yaml:"env"`
	Model      string            `yaml:"model"`
}

// Hat is one entry under hats:.
type Hat struct {
	ID               string   `yaml:"-"`
	Name             string   `yaml:"name"`
	Description      string   `yaml:"description"`
	Triggers         []string `yaml:"triggers"`
	Publishes        []string `yaml:"publishes"`
	Instructions     string   `yaml:"instructions"`
	DefaultPublishes string   `yaml:"default_publishes"`
	MaxActivations   int      `yaml:"max_activations"`
	Backend          *CLI     `yaml:"backend"`
	// Line is where the hat is defined, for messages.
	Line int `yaml:"-"`
}
