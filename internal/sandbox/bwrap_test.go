package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBwrapArgsMountInDepthOrder(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	require.NoError(t, os.MkdirAll(filepath.Join(secret, "ws"), 0o755))
	env := filepath.Join(secret, "ws", ".env")
	require.NoError(t, os.WriteFile(env, nil, 0o600))
	r := rules{
		WriteDirs: []string{filepath.Join(secret, "ws")},
		Devices:   []string{"/dev/null"},
		Deny:      []string{secret, env},
		NetDeny:   true,
	}
	got := strings.Join(bwrapArgs(r), " ")
	want := strings.Join([]string{
		"--die-with-parent --ro-bind / / --dev /dev",
		"--tmpfs " + secret,
		"--bind " + secret + "/ws " + secret + "/ws",
		"--ro-bind /dev/null " + env,
		"--unshare-net",
	}, " ")
	assert.Equal(t, want, got, "a writable path inside a hidden one is bound after the tmpfs that hides it; devices are bwrap's own")
}
