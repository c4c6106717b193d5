package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/internal/sandbox"
)

// A loop's sandbox sections keep the network unless one says otherwise:
// the confiner asks the machine for a network namespace (a process
// started) only once a section denies the network, and then once more
// even though it had looked for the others already.
func TestConfinerLooksForANetworkNamespaceOnlyForDeny(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	c := &confiner{launcher: ralphBin, stderr: io.Discard}
	_, err := c.agent(config.Sandbox{Mode: "auto", Network: "allow"})
	require.NoError(t, err)
	require.NotNil(t, c.support)
	assert.False(t, c.probed)
	assert.False(t, c.support.NetNamespace, "not looked for")

	_, err = c.agent(config.Sandbox{Mode: "auto", Network: "deny"})
	require.NoError(t, err)
	assert.True(t, c.probed)
	assert.Equal(t, sandbox.Detect().NetNamespace, c.support.NetNamespace)
}
