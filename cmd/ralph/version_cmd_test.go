package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVersionNamesTheReleaseTheModuleOrTheCommit(t *testing.T) {
	t.Parallel()
	withCommit := func(version, modified string) *debug.BuildInfo {
		return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: version}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.modified", Value: modified},
		}}
	}
	for _, c := range []struct {
		name, released string
		info           *debug.BuildInfo
		want           string
	}{
		{"a release", "v1.2.3", withCommit("(devel)", "false"), "ralph v1.2.3 (commit 0123456789ab, go1.26.8, linux/arm64)"},
		{"go install @version", "dev", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}}, "ralph v1.2.3 (go1.26.8, linux/arm64)"},
		{"go build in a clean clone", "dev", withCommit("v0.0.0-20261127101010-0123456789ab", "false"), "ralph v0.0.0-20261127101010-0123456789ab (commit 0123456789ab, go1.26.8, linux/arm64)"},
		{"go build with changes", "dev", withCommit("v0.0.0-20261127101010-0123456789ab+dirty", "true"), "ralph v0.0.0-20261127101010-0123456789ab+dirty (commit 0123456789ab, dirty, go1.26.8, linux/arm64)"},
		{"go build without version control", "dev", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "ralph devel (go1.26.8, linux/arm64)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, describeBuild(c.released, c.info, "linux/arm64"))
		})
	}
}

// A plain `go build` in a clone names the clone's commit, not "dev".
func TestE2EVersionOfAPlainBuildNamesItsCommit(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	head, err := exec.Command("git", "-C", root, "-c", "safe.directory=*", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("ralph's source is not a git checkout here:", err)
	}
	if fi, err := os.Stat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		t.Skip("go records the commit only in a clone, not in a git worktree (.git is a file)")
	}
	bin := filepath.Join(t.TempDir(), "ralph")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/ralph")
	build.Dir = root
	// The checkout may belong to another user than the test's (CI runs as
	// root); git refuses such a repository unless told it is safe.
	build.Env = append(os.Environ(), "GOFLAGS=", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	out, err = exec.Command(bin, "version").Output()
	require.NoError(t, err)
	line := strings.TrimSpace(string(out))
	assert.Regexp(t, regexp.MustCompile(`^ralph v\S+ \(commit `+strings.TrimSpace(string(head))[:12]+`(, dirty)?, go\S+, \w+/\w+\)$`), line)
	assert.NotContains(t, line, " dev ")
}
