package fakemodel

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Agents are the CLIs [AgentEnv] and [AgentArgs] know, by binary name (also
// their folder name under internal/agents/install.sh's DEST).
var Agents = []string{"claude", "codex", "gemini", "opencode", "pi", "qwen", "copilot"}

// APIKey is the key every CLI is given; the server accepts any key.
const APIKey = "sk-test"

// Model names the CLIs are configured with. Codex needs a name it knows to
// offer apply_patch (with an unknown name it warns and writes via the shell).
const (
	CodexModel = "gpt-5.5"
	FakeModel  = "fake-model"
)

// AgentEnv points one CLI at the fake server at baseURL (as returned by
// [Server.Start]): it writes the config files the CLI needs under home and
// returns the environment variables to run it with, HOME=home and the XDG
// folders included. Append the result to a minimal base environment (PATH,
// TMPDIR, …); later entries win in os/exec, but a base that already holds
// provider variables such as ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_USE_BEDROCK
// could still redirect a CLI, so do not start from a developer's full
// environment. Settings follow
// docs/agent-clis.md#testing-against-the-fake-model; telemetry, update checks and
// usage statistics are switched off where the CLI allows, because this
// machine has no internet and the calls only add delays.
func AgentEnv(cli, baseURL, home string) ([]string, error) {
	base := strings.TrimSuffix(baseURL, "/")
	env := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		// Codex's HTTP client honours proxy variables; the fake is local.
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		"NO_COLOR=1",
	}
	setup, ok := agentSetups[cli]
	if !ok {
		return nil, fmt.Errorf("fakemodel: unknown agent CLI %q (known: %s)", cli, strings.Join(Agents, ", "))
	}
	extra, err := setup(base, home)
	if err != nil {
		return nil, fmt.Errorf("fakemodel: configure %s: %w", cli, err)
	}
	return append(env, extra...), nil
}

// AgentArgs is the headless command line (after the binary name) that runs
// one CLI unattended on prompt with machine-readable output, as described in
// docs/agent-clis.md#testing-against-the-fake-model. It matches the
// configuration [AgentEnv] writes.
func AgentArgs(cli, prompt string) ([]string, error) {
	switch cli {
	case "claude":
		return []string{"-p", prompt, "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"}, nil
	case "codex":
		return []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", prompt}, nil
	case "gemini":
		return []string{"-p", prompt, "--output-format", "stream-json", "--yolo", "--skip-trust"}, nil
	case "opencode":
		return []string{"run", "--format", "json", "--auto", prompt}, nil
	case "pi":
		return []string{"-p", "--mode", "json", "--provider", "fake", "--model", FakeModel, "--no-session", prompt}, nil
	case "qwen":
		return []string{"--auth-type", "openai", "-m", FakeModel, "--output-format", "stream-json", "--yolo", prompt}, nil
	case "copilot":
		return []string{"-p", prompt, "--output-format", "json", "--allow-all-tools", "--disable-client-telemetry", "--no-auto-update"}, nil
	}
	return nil, fmt.Errorf("fakemodel: unknown agent CLI %q (known: %s)", cli, strings.Join(Agents, ", "))
}

type agentSetup func(base, home string) ([]string, error)

var agentSetups = map[string]agentSetup{
	"claude":   claudeEnv,
	"codex":    codexEnv,
	"gemini":   geminiEnv,
	"opencode": opencodeEnv,
	"pi":       piEnv,
	"qwen":     qwenEnv,
	"copilot":  copilotEnv,
}

func claudeEnv(base, _ string) ([]string, error) {
	return []string{
		"ANTHROPIC_BASE_URL=" + base, "ANTHROPIC_API_KEY=" + APIKey,
		"IS_SANDBOX=1", // --dangerously-skip-permissions is refused as root without it
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		// Without it Claude Code also asks for a session title (a side request).
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}, nil
}

func codexEnv(base, home string) ([]string, error) {
	dir := filepath.Join(home, ".codex")
	config := fmt.Sprintf(`model = %q
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake"
base_url = %q
env_key = "FAKE_API_KEY"
wire_api = "responses"
`, CodexModel, base+"/v1")
	if err := writeFile(filepath.Join(dir, "config.toml"), config); err != nil {
		return nil, err
	}
	return []string{"CODEX_HOME=" + dir, "FAKE_API_KEY=" + APIKey}, nil
}

func geminiEnv(base, home string) ([]string, error) {
	// Without selectedType, GOOGLE_GEMINI_BASE_URL picks the "gateway" auth
	// type, which headless mode rejects (exit 41).
	settings := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
	}
	if err := writeJSONFile(filepath.Join(home, ".gemini", "settings.json"), settings); err != nil {
		return nil, err
	}
	return []string{"GOOGLE_GEMINI_BASE_URL=" + base, "GEMINI_API_KEY=" + APIKey,
		"GEMINI_CLI_TRUST_WORKSPACE=true"}, nil
}

func opencodeEnv(base, home string) ([]string, error) {
	config := map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Fake",
			"options": map[string]any{"baseURL": base + "/v1", "apiKey": APIKey},
			"models":  map[string]any{FakeModel: map[string]any{"name": "Fake model", "tool_call": true}},
		}},
		"model": "fake/" + FakeModel, "small_model": "fake/" + FakeModel,
		"autoupdate": false, "share": "disabled",
	}
	if err := writeJSONFile(filepath.Join(home, ".config", "opencode", "opencode.json"), config); err != nil {
		return nil, err
	}
	return []string{"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
		// Each start runs a background `npm install @opencode-ai/plugin` into
		// the config folder (seen); with a fresh HOME that is a registry
		// download per run. Offline, it fails at once and harmlessly.
		"npm_config_offline=true"}, nil
}

func piEnv(base, home string) ([]string, error) {
	dir := filepath.Join(home, ".pi", "agent")
	models := map[string]any{"providers": map[string]any{"fake": map[string]any{
		"baseUrl": base + "/v1", "api": "openai-completions", "apiKey": APIKey,
		"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
		"models": []any{map[string]any{"id": FakeModel, "name": "Fake model", "reasoning": false}},
	}}}
	if err := writeJSONFile(filepath.Join(dir, "models.json"), models); err != nil {
		return nil, err
	}
	return []string{"PI_CODING_AGENT_DIR=" + dir, "PI_OFFLINE=1", "PI_TELEMETRY=0"}, nil
}

func qwenEnv(base, home string) ([]string, error) {
	settings := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "openai"}},
		"general":   map[string]any{"enableAutoUpdate": false},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
	}
	if err := writeJSONFile(filepath.Join(home, ".qwen", "settings.json"), settings); err != nil {
		return nil, err
	}
	return []string{"OPENAI_BASE_URL=" + base + "/v1", "OPENAI_API_KEY=" + APIKey, "OPENAI_MODEL=" + FakeModel}, nil
}

func copilotEnv(base, _ string) ([]string, error) {
	return []string{
		"COPILOT_OFFLINE=true", // BYOK: no GitHub login, telemetry or updates
		"COPILOT_PROVIDER_BASE_URL=" + base + "/v1", "COPILOT_PROVIDER_TYPE=openai",
		"COPILOT_PROVIDER_API_KEY=" + APIKey, "COPILOT_MODEL=" + FakeModel,
		"COPILOT_AUTO_UPDATE=false",
	}, nil
}

func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, string(data)+"\n")
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}
