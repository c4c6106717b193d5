package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/runfiles"
)

// decideMode tells a hats loop from SPEC mode, new from resumed, in one
// place, and says why.
func TestDecideMode(t *testing.T) {
	t.Parallel()
	noObjective := errors.New("no objective")
	notFound := config.ErrNotFound
	withHats := &config.Config{Hats: []config.Hat{{ID: "builder"}}}
	for name, c := range map[string]struct {
		specMD  bool // a SPEC.md in the workspace
		ch      runChoices
		cfg     *config.Config
		cfgErr  error
		objErr  error
		kind    string
		spec    string
		wantErr string
	}{
		"an objective":               {kind: runfiles.ModeLoop},
		"--spec":                     {ch: runChoices{spec: "SPEC.md"}, specMD: true, kind: runfiles.ModeSpec, spec: "SPEC.md"},
		"--spec without the file":    {ch: runChoices{spec: "TODO.md"}, wantErr: "no spec at"},
		"--spec without a ralph.yml": {ch: runChoices{spec: "SPEC.md"}, specMD: true, cfgErr: notFound, kind: runfiles.ModeSpec, spec: "SPEC.md"},
		"SPEC.md and nothing else":   {specMD: true, objErr: noObjective, kind: runfiles.ModeSpec, spec: "SPEC.md"},
		"SPEC.md, no ralph.yml":      {specMD: true, cfgErr: notFound, objErr: noObjective, kind: runfiles.ModeSpec, spec: "SPEC.md"},
		"SPEC.md beside hats":        {specMD: true, cfg: withHats, objErr: noObjective, wantErr: "no objective"},
		"no ralph.yml, no SPEC.md":   {cfgErr: notFound, objErr: noObjective, wantErr: notFound.Error()},
		"-n with an objective":       {ch: runChoices{n: 3}, wantErr: "-n is for SPEC mode"},
		"--all with an objective":    {ch: runChoices{all: true}, wantErr: "--all is for SPEC mode"},
		"no objective":               {objErr: noObjective, wantErr: "no objective"},
		"resume keeps its objective": {ch: runChoices{start: runfiles.StartResume}, objErr: noObjective, kind: runfiles.ModeLoop},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if c.specMD {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "SPEC.md"), []byte("- [ ] one\n"), 0o644))
			}
			cfg := c.cfg
			if cfg == nil {
				cfg = config.Default()
			}
			m, err := decideMode(dir, c.ch, cfg, c.cfgErr, c.objErr)
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.kind, m.kind)
			assert.Equal(t, c.ch.start, m.start)
			assert.NotEmpty(t, m.why)
			if c.spec != "" {
				assert.Equal(t, filepath.Join(dir, c.spec), m.spec)
			} else {
				assert.Empty(t, m.spec)
			}
		})
	}
}
