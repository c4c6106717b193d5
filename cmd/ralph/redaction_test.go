package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
)

func TestAForgesTokenIsHiddenWhateverItsVariableIsCalled(t *testing.T) {
	t.Setenv("ACME_ISSUES", "acme-issues-credential-0123456789")
	t.Setenv("ACME_PULLS", "acme-pulls-credential-0123456789")
	cfg, err := config.LoadBytes("ralph.yml", []byte("autopilot:\n  source: {type: github, repo: acme/app, token_env: ACME_ISSUES}\n"+
		"  deliver: pr\n  pr: {forge: gitlab, project: acme/app, token_env: ACME_PULLS}\n"))
	require.NoError(t, err)
	r := redactorOf(cfg)
	out := r.String("issues acme-issues-credential-0123456789, pulls acme-pulls-credential-0123456789")
	assert.NotContains(t, out, "credential")
}

func TestTokenEnvsDefaultPerForge(t *testing.T) {
	t.Parallel()
	cfg, err := config.LoadBytes("ralph.yml", []byte("autopilot:\n  source: {type: linear, team: ENG}\n  deliver: pr\n  pr: {forge: github, repo: acme/app}\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"LINEAR_API_KEY", "GITHUB_TOKEN"}, tokenEnvs(cfg.Autopilot))
	cfg, err = config.LoadBytes("ralph.yml", []byte("autopilot:\n  source: tk\n"))
	require.NoError(t, err)
	assert.Empty(t, tokenEnvs(cfg.Autopilot), "a tracker in the repository reads no token")
}
