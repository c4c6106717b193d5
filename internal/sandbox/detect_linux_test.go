package sandbox

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A run whose agent keeps the network (every loop unless configured
// otherwise) starts no process to probe for a network namespace it will
// not get; one that denies it probes once per process, and Resolve then
// knows whether Landlock can enforce it.
func TestDetectForProbesTheNetworkNamespaceOnlyForDeny(t *testing.T) {
	requireMode(t, ModeLandlock)
	saved := netns
	t.Cleanup(func() { netns = saved })

	netns = new(netnsProbe)
	allow := DetectFor(NetworkAllow)
	assert.False(t, netns.ran, "network: allow needs no network namespace, so nothing is probed")
	assert.False(t, allow.NetNamespace)
	mode, _, err := allow.Resolve(ModeLandlock, NetworkAllow)
	assert.NoError(t, err)
	assert.Equal(t, ModeLandlock, mode)

	netns = new(netnsProbe)
	deny := DetectFor(NetworkDeny)
	assert.True(t, netns.ran, "network: deny under Landlock needs the probe's answer")
	assert.Equal(t, Detect().NetNamespace, deny.NetNamespace)
}
