package cluster_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot/cluster"
)

// signerKeyPair reads the key pair in a seed file, as a server's
// configuration would hold its public half.
func signerKeyPair(t *testing.T, path string) nkeys.KeyPair {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(data))))
	require.NoError(t, err)
	return kp
}

func TestANewSeedIsTheOwnersAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", "worker.nk")
	pub, err := cluster.WriteNewSeed(path)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(pub, "U"), pub)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	dir, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), dir.Mode().Perm())
	s, err := cluster.ReadSigner(path)
	require.NoError(t, err)
	assert.Equal(t, pub, s.PublicKey())

	_, err = cluster.WriteNewSeed(path)
	require.ErrorContains(t, err, "exists already; ralph never replaces a key")
	again, err := cluster.ReadSigner(path)
	require.NoError(t, err)
	assert.Equal(t, pub, again.PublicKey(), "the key is kept")

	require.NoError(t, os.Chmod(path, 0o644))
	_, err = cluster.ReadSigner(path)
	require.ErrorContains(t, err, "can be read by others (mode 0644)")
	var setup *cluster.SetupError
	require.ErrorAs(t, err, &setup)
	assert.Equal(t, "make it readable by you alone: chmod 600 "+path, setup.Hint())
}

func TestReadSignerTakesSeedsAndCredsFiles(t *testing.T) {
	kp, err := nkeys.CreateUser()
	require.NoError(t, err)
	seed, err := kp.Seed()
	require.NoError(t, err)
	pub, err := kp.PublicKey()
	require.NoError(t, err)
	dir := t.TempDir()
	for name, content := range map[string]string{
		"bare.nk":      string(seed) + "\n",
		"comment.nk":   "# the worker's key\n\n" + string(seed) + "\r\n",
		"ralph.creds":  "-----BEGIN NATS USER JWT-----\neyJ0eXAiOiJKV1QifQ.e30.x\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n" + string(seed) + "\n------END USER NKEY SEED------\n",
		"nothing.nk":   "\n",
		"public.nk":    pub + "\n",
		"truncated.nk": string(seed[:20]) + "\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	for _, name := range []string{"bare.nk", "comment.nk", "ralph.creds"} {
		s, err := cluster.ReadSigner(filepath.Join(dir, name))
		require.NoError(t, err, name)
		assert.Equal(t, pub, s.PublicKey(), name)
	}
	for name, want := range map[string]string{
		"nothing.nk":   "it is empty",
		"public.nk":    "its first line is not an nkey seed",
		"truncated.nk": "its first line is not an nkey seed",
	} {
		_, err := cluster.ReadSigner(filepath.Join(dir, name))
		require.ErrorContains(t, err, want, name)
		assert.NotContains(t, err.Error(), string(seed[:20]), "an error never repeats a seed")
	}
}

func TestKeyringTakesKeysAndFilesOfThem(t *testing.T) {
	a, b := newSigner(), newSigner()
	dir := t.TempDir()
	file := filepath.Join(dir, "workers.pub")
	require.NoError(t, os.WriteFile(file, []byte("# the workers\n"+a.PublicKey()+"\n\n"+b.PublicKey()+"\n"), 0o644))
	k, err := cluster.ReadKeyring(cluster.RoleWorker, []string{file, a.PublicKey(), " "})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{a.PublicKey(), b.PublicKey()}, k.Keys())

	kp, err := nkeys.CreateUser()
	require.NoError(t, err)
	seed, err := kp.Seed()
	require.NoError(t, err)
	seeds := filepath.Join(dir, "oops.pub")
	require.NoError(t, os.WriteFile(seeds, []byte(a.PublicKey()+"\n"+string(seed)+"\n"), 0o600))
	for value, want := range map[string]string{
		string(seed):               "a seed (a private key, S…) was given where a public key belongs",
		seeds:                      seeds + ":2 holds a seed, a private key",
		"UNOTAKEY":                 `"UNOTAKEY" is neither a public nkey`,
		filepath.Join(dir, "none"): "is neither a public nkey (U…, 56 characters) nor a file of them",
	} {
		_, err := cluster.ReadKeyring(cluster.RoleWorker, []string{value})
		require.ErrorContains(t, err, want, value)
		assert.NotContains(t, err.Error(), string(seed), "an error never repeats a seed")
	}
}
