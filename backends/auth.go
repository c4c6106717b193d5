package backends

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// authSpecs says, per CLI, where it finds credentials, for ralph doctor.
// Each entry cites where the locations come from. Only presence is ever
// reported; a file is read only to name what it holds (a login method,
// provider ids), never to show a secret.
var authSpecs = map[string]authSpec{
	// Claude Code: ANTHROPIC_API_KEY (or an apiKeyHelper) disables the
	// claude.ai OAuth login; the login is kept in the macOS Keychain, or in
	// ~/.claude/.credentials.json elsewhere (CLAUDE_CONFIG_DIR moves
	// ~/.claude). CLAUDE_CODE_OAUTH_TOKEN comes from `claude setup-token`.
	// Sources: Claude Code's authentication guide (mintlify mirror of its
	// docs), slashtechno/amped ("~/.claude/.credentials.json (Linux)"),
	// nousresearch/hermes-agent agent/anthropic_credentials.py (lookup order
	// ANTHROPIC_TOKEN / CLAUDE_CODE_OAUTH_TOKEN, ANTHROPIC_API_KEY, then
	// ~/.claude/.credentials.json).
	"claude": {
		env: []authVar{
			{"ANTHROPIC_API_KEY", "Anthropic API key"},
			{"ANTHROPIC_AUTH_TOKEN", "bearer token for a gateway"},
			{"CLAUDE_CODE_OAUTH_TOKEN", "token from `claude setup-token`"},
			{"CLAUDE_CODE_USE_BEDROCK", "Amazon Bedrock"},
			{"CLAUDE_CODE_USE_VERTEX", "Google Vertex AI"},
		},
		files: func(e diagEnv) []authFile {
			return []authFile{{path: filepath.Join(e.dir("CLAUDE_CONFIG_DIR", ".claude"), ".credentials.json"), detail: "Claude Code login"}}
		},
		hint: claudeAuthHint + " (on macOS the login is in the Keychain, which ralph doctor cannot see)",
	},
	// Codex: `codex login` (ChatGPT or --with-api-key) writes
	// $CODEX_HOME/auth.json (~/.codex by default); OPENAI_API_KEY is read
	// from the environment, CODEX_API_KEY by codex exec. Sources:
	// developers.openai.com/codex/auth, openai/codex docs/authentication.md
	// ("Delete ~/.codex/auth.json"), the Codex Elixir SDK's Codex.Auth
	// ("CODEX_API_KEY, auth.json, OPENAI_API_KEY precedence").
	"codex": {
		env: []authVar{
			{"CODEX_API_KEY", "API key for codex exec"},
			{"OPENAI_API_KEY", "OpenAI API key"},
		},
		files: func(e diagEnv) []authFile {
			return []authFile{{path: filepath.Join(e.dir("CODEX_HOME", ".codex"), "auth.json"), detail: "`codex login`"}}
		},
		hint: codexAuthHint,
	},
	// Gemini CLI: GEMINI_API_KEY (AI Studio), GOOGLE_API_KEY or
	// GOOGLE_GENAI_USE_VERTEXAI with GOOGLE_APPLICATION_CREDENTIALS
	// (Vertex); "Login with Google" caches ~/.gemini/oauth_creds.json; the
	// method chosen is security.auth.selectedType in ~/.gemini/settings.json
	// (oauth-personal, gemini-api-key, vertex-ai). Headless runs need an API
	// key or Vertex AI. Sources: geminicli.com/docs/get-started/
	// authentication, google-gemini/gemini-cli#1122 (credentials in
	// <home>/.gemini/oauth_creds.json), ai-sdk-provider-gemini-cli's notes
	// on AuthType, docs/agent-clis.md#gemini (selectedType).
	"gemini": {
		env: []authVar{
			{"GEMINI_API_KEY", "Gemini API key"},
			{"GOOGLE_API_KEY", "Google API key"},
			{"GOOGLE_GENAI_USE_VERTEXAI", "Vertex AI"},
			{"GOOGLE_APPLICATION_CREDENTIALS", "service account for Vertex AI"},
		},
		files: func(e diagEnv) []authFile {
			dir := filepath.Join(e.home, ".gemini")
			return []authFile{
				{path: filepath.Join(dir, "oauth_creds.json"), detail: "Login with Google"},
				{path: filepath.Join(dir, "settings.json"), detail: "settings", describe: selectedAuthType},
				{path: filepath.Join(dir, ".env"), detail: "environment file gemini loads"},
			}
		},
		hint: geminiAuthHint,
	},
	// OpenCode: `opencode auth login` stores {provider: {type, key}} in
	// $XDG_DATA_HOME/opencode/auth.json (~/.local/share/opencode); providers
	// also read their usual variables, and opencode.json may hold options.
	// Sources: opencode-provider-manager's auth module ("OpenCode stores
	// credentials in ~/.local/share/opencode/auth.json with the format
	// {provider_id: {type: api, key}}"), sync-auth's opencode provider.
	"opencode": {
		env: providerKeys,
		files: func(e diagEnv) []authFile {
			return []authFile{
				{path: filepath.Join(e.dir("XDG_DATA_HOME", ".local", "share"), "opencode", "auth.json"), detail: "`opencode auth login`", describe: providerIDs},
				{path: filepath.Join(e.dir("XDG_CONFIG_HOME", ".config"), "opencode", "opencode.json"), detail: "opencode config (providers may carry keys)"},
			}
		},
		hint: "run `opencode auth login`, or set the API key variable of your provider (e.g. ANTHROPIC_API_KEY)",
	},
	// pi: /login stores subscription tokens and API keys in
	// $PI_CODING_AGENT_DIR/auth.json (~/.pi/agent); custom providers live in
	// models.json; the provider variables (ANTHROPIC_API_KEY,
	// OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY, XAI_API_KEY, …)
	// work too. Sources: pi's providers guide (learnblockchain.cn
	// translation: "Token 存储在 ~/.pi/agent/auth.json"),
	// ClipboardHealth/groundcrew docs/credentials.md ("PI_CODING_AGENT_DIR
	// changes that base directory"), rivet.dev's pi API-key page.
	"pi": {
		env: providerKeys,
		files: func(e diagEnv) []authFile {
			dir := e.dir("PI_CODING_AGENT_DIR", ".pi", "agent")
			return []authFile{
				{path: filepath.Join(dir, "auth.json"), detail: "pi /login", describe: providerIDs},
				{path: filepath.Join(dir, "models.json"), detail: "custom providers", describe: modelsProviders},
			}
		},
		hint: "run `pi` and /login, or set the API key variable of your provider (e.g. ANTHROPIC_API_KEY)",
	},
	// Qwen Code: OpenAI-compatible keys from OPENAI_API_KEY (+
	// OPENAI_BASE_URL) or .qwen/.env; Qwen OAuth caches
	// ~/.qwen/oauth_creds.json (its free tier ended 2026-04-15); the method
	// is security.auth.selectedType in ~/.qwen/settings.json. Sources:
	// qwenlm.github.io/qwen-code-docs (cli/authentication, users/
	// configuration/auth), QwenLM/qwen-code#225, nullclaw/nullclaw#524.
	"qwen": {
		env: []authVar{
			{"OPENAI_API_KEY", "OpenAI-compatible API key"},
			{"DASHSCOPE_API_KEY", "Alibaba Cloud DashScope key"},
		},
		files: func(e diagEnv) []authFile {
			dir := filepath.Join(e.home, ".qwen")
			return []authFile{
				{path: filepath.Join(dir, "oauth_creds.json"), detail: "Qwen OAuth login"},
				{path: filepath.Join(dir, "settings.json"), detail: "settings", describe: selectedAuthType},
				{path: filepath.Join(dir, ".env"), detail: "environment file qwen loads"},
			}
		},
		hint: "run `qwen auth`, or set OPENAI_API_KEY (and OPENAI_BASE_URL)",
	},
	// Copilot CLI: COPILOT_GITHUB_TOKEN, GH_TOKEN, GITHUB_TOKEN in that
	// order, then its /login (system keychain, or a plaintext token under
	// ~/.copilot when there is none; COPILOT_HOME moves it), then the gh
	// CLI's login. With BYOK (COPILOT_PROVIDER_BASE_URL and
	// COPILOT_PROVIDER_API_KEY) no GitHub login is needed. Sources:
	// docs.github.com …/copilot-cli/set-up-copilot-cli/authenticate-copilot-cli,
	// github/copilot-cli#2071 ("falls back to storing the OAuth token in
	// plaintext under ~/.copilot/"), kunchenguid/quota-axi#55
	// (~/.copilot/config.json), `copilot help environment`.
	"copilot": {
		env: []authVar{
			{"COPILOT_GITHUB_TOKEN", "GitHub token for Copilot"},
			{"GH_TOKEN", "GitHub token"},
			{"GITHUB_TOKEN", "GitHub token"},
			{"COPILOT_PROVIDER_BASE_URL", "BYOK model provider"},
			{"COPILOT_PROVIDER_API_KEY", "BYOK provider key"},
		},
		files: func(e diagEnv) []authFile {
			return []authFile{
				{path: filepath.Join(e.dir("COPILOT_HOME", ".copilot"), "config.json"), detail: "copilot /login (a plaintext token when there is no system keychain)"},
				{path: filepath.Join(e.dir("XDG_CONFIG_HOME", ".config"), "gh", "hosts.yml"), detail: "gh CLI login (copilot's last resort)"},
			}
		},
		hint: copilotAuthHint,
	},
	// Kiro CLI: `kiro-cli login` keeps its state in
	// ~/.local/share/kiro-cli/data.sqlite3 on Linux; KIRO_API_KEY for
	// headless runs. Sources: kiro.dev/docs/cli/headless, a gist clearing
	// ~/.local/share/kiro-cli/data.sqlite3, jwadow/kiro-openai-gateway
	// (reads its tokens from that database).
	"kiro": {
		env: []authVar{{"KIRO_API_KEY", "Kiro API key"}},
		files: func(e diagEnv) []authFile {
			return []authFile{{path: filepath.Join(e.dir("XDG_DATA_HOME", ".local", "share"), "kiro-cli", "data.sqlite3"), detail: "kiro-cli login state"}}
		},
		hint: "run `kiro-cli login`, or set KIRO_API_KEY",
	},
	// Amp: AMP_API_KEY, or `amp login`, which writes
	// ~/.local/share/amp/secrets.json. Sources: slashtechno/amped README,
	// steipete/CodexBar docs/amp.md.
	"amp": {
		env: []authVar{{"AMP_API_KEY", "Amp access token"}},
		files: func(e diagEnv) []authFile {
			return []authFile{{path: filepath.Join(e.dir("XDG_DATA_HOME", ".local", "share"), "amp", "secrets.json"), detail: "`amp login`"}}
		},
		hint: "run `amp login`, or set AMP_API_KEY",
	},
	// Cursor's agent: CURSOR_API_KEY (or --api-key), or `agent login`,
	// whose storage place its docs do not name; `cursor-agent status`
	// reports it. Source: cursor.com/docs/cli/reference/authentication.
	"cursor": {
		env:  []authVar{{"CURSOR_API_KEY", "Cursor API key"}},
		hint: "run `cursor-agent login` (check with `cursor-agent status`), or set CURSOR_API_KEY",
	},
}

// providerKeys are the API-key variables of the model providers that
// multi-provider CLIs (OpenCode, pi) read.
var providerKeys = []authVar{
	{"ANTHROPIC_API_KEY", "Anthropic"},
	{"OPENAI_API_KEY", "OpenAI"},
	{"GEMINI_API_KEY", "Google Gemini"},
	{"OPENROUTER_API_KEY", "OpenRouter"},
	{"XAI_API_KEY", "xAI"},
	{"GROQ_API_KEY", "Groq"},
	{"MISTRAL_API_KEY", "Mistral"},
}

// selectedAuthType names the login method of a Gemini CLI or Qwen Code
// settings.json: security.auth.selectedType, or the older top-level
// selectedAuthType.
func selectedAuthType(data []byte) string {
	var s struct {
		Security struct {
			Auth struct {
				SelectedType string `json:"selectedType"`
			} `json:"auth"`
		} `json:"security"`
		SelectedAuthType string `json:"selectedAuthType"`
	}
	if json.Unmarshal(data, &s) != nil {
		return ""
	}
	t := s.Security.Auth.SelectedType
	if t == "" {
		t = s.SelectedAuthType
	}
	if t == "" {
		return ""
	}
	return "auth type " + t
}

// providerIDs names the providers an auth.json of the form
// {"provider": {…}} holds credentials for.
func providerIDs(data []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil || len(m) == 0 {
		return ""
	}
	return "providers: " + strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

// modelsProviders names the providers of a pi models.json.
func modelsProviders(data []byte) string {
	var m struct {
		Providers map[string]json.RawMessage `json:"providers"`
	}
	if json.Unmarshal(data, &m) != nil || len(m.Providers) == 0 {
		return ""
	}
	return "providers: " + strings.Join(slices.Sorted(maps.Keys(m.Providers)), ", ")
}
