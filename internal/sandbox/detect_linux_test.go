package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// freshProbe makes the next probe of this process start over, with the
// user's cache in a directory of the test's own, and returns where the
// cache's entries go.
func freshProbe(t *testing.T) string {
	t.Helper()
	saved := netns
	t.Cleanup(func() { netns = saved })
	netns = new(netnsProbe)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	return filepath.Join(cache, "ralph")
}

// A run whose agent keeps the network (every loop unless configured
// otherwise) starts no process to probe for a network namespace it will
// not get; one that denies it probes, and Resolve then knows whether
// Landlock can enforce it.
func TestDetectForProbesTheNetworkNamespaceOnlyForDeny(t *testing.T) {
	requireMode(t, ModeLandlock)

	freshProbe(t)
	allow := DetectFor(NetworkAllow)
	assert.False(t, netns.started, "network: allow needs no network namespace, so nothing is probed")
	assert.False(t, allow.NetNamespace)
	mode, _, err := allow.Resolve(ModeLandlock, NetworkAllow)
	require.NoError(t, err)
	assert.Equal(t, ModeLandlock, mode)

	freshProbe(t)
	deny := DetectFor(NetworkDeny)
	assert.True(t, netns.started, "network: deny under Landlock needs the probe's answer, and the cache is empty")
	netns = new(netnsProbe)
	assert.Equal(t, Detect().NetNamespace, deny.NetNamespace)
}

// A success is recorded, under a name of this binary, kernel, boot and
// user, and the next run that denies the network takes it without a
// probe; an entry of another binary's is neither trusted nor kept.
func TestDetectForTrustsOnlyThisBinarysRecordedSuccess(t *testing.T) {
	requireMode(t, ModeLandlock)
	dir := freshProbe(t)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	stale := filepath.Join(dir, "netns-0123456789abcdef0123456789abcdef")
	require.NoError(t, os.WriteFile(stale, nil, 0o600))

	first := DetectFor(NetworkDeny)
	assert.True(t, netns.started, "an entry of another binary, kernel or boot answers nothing")
	if !first.NetNamespace {
		entries, _ := filepath.Glob(filepath.Join(dir, "netns-*"))
		assert.Equal(t, []string{stale}, entries, "a failed probe records nothing")
		t.Skip("this machine gives no network namespace, so there is no success to record")
	}
	entries, err := filepath.Glob(filepath.Join(dir, "netns-*"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "the success is the only entry")
	assert.NotEqual(t, stale, entries[0])

	netns = new(netnsProbe)
	second := DetectFor(NetworkDeny)
	assert.False(t, netns.started, "the recorded success answers")
	assert.True(t, netns.cached)
	assert.True(t, second.NetNamespace)

	netns = new(netnsProbe)
	Detect()
	assert.True(t, netns.started, "ralph doctor probes whatever is recorded")
}

// An entry that is not a plain file of this user's (a link an agent
// planted, say) is not taken for a success.
func TestDetectForTrustsNoLinkForAnEntry(t *testing.T) {
	requireMode(t, ModeLandlock)
	dir := freshProbe(t)
	entry := netnsCacheEntry()
	require.NotEmpty(t, entry)
	require.Equal(t, dir, filepath.Dir(string(entry)))
	require.NoError(t, os.MkdirAll(dir, 0o700))
	target := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, os.WriteFile(target, nil, 0o600))
	require.NoError(t, os.Symlink(target, string(entry)))
	assert.False(t, entry.holds())
	if DetectFor(NetworkDeny).NetNamespace {
		assert.True(t, netns.started)
		assert.True(t, entry.holds(), "the probe's success replaces the link with an entry")
		assert.FileExists(t, target, "the link's target is left alone")
	}
}
