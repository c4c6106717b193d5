package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot"
)

// The secrets of the tests that check that no form of a secret reaches
// anything ralph writes, commits, prints or serves: names of each kind
// ralph knows for secret, and a URL with a password under a plain name.
// DEPLOY_TOKEN has a character each encoding treats apart.
var formSecrets = map[string]string{
	"DEPLOY_TOKEN":       "dpl/tok+en=9f8e7d6c5b4a?x&y",
	"MYSQL_PWD":          "my-sql-pwd-4e5f6a7b",
	"GH_PAT":             "ghp_patPATpat0123456789",
	"SSH_KEY_PASSPHRASE": "correct horse battery staple",
	"DATABASE_URL":       "postgres://app:db-pw-7c8d9e0f@db.internal/app",
}

// databasePassword is DATABASE_URL's password, which is a secret on its
// own too.
const databasePassword = "db-pw-7c8d9e0f"

// secretEnv is formSecrets as environment entries.
func secretEnv() []string {
	var env []string
	for name, value := range formSecrets {
		env = append(env, name+"="+value)
	}
	return env
}

// encodedForms are value as programs print it: as it is, base64 (both
// alphabets), percent-encoded, hex, and JSON-escaped with / as \/.
func encodedForms(value string) map[string]string {
	quoted, _ := json.Marshal(value)
	return map[string]string{
		"plain":        value,
		"base64":       base64.StdEncoding.EncodeToString([]byte(value)),
		"base64url":    base64.URLEncoding.EncodeToString([]byte(value)),
		"url-encoded":  url.QueryEscape(value),
		"hex":          hex.EncodeToString([]byte(value)),
		"JSON-escaped": strings.ReplaceAll(string(quoted[1:len(quoted)-1]), "/", `\/`),
	}
}

// leakedForms are every form of every secret, by a description.
func leakedForms() map[string]string {
	out := map[string]string{}
	add := func(name, value string) {
		for kind, form := range encodedForms(value) {
			out[name+" "+kind] = form
		}
	}
	for name, value := range formSecrets {
		add(name, value)
	}
	add("DATABASE_URL's password", databasePassword)
	return out
}

// writeLeak writes a file that holds every form of every secret, two
// secrets a line (a failed command's last lines are what ralph quotes),
// outside the repository, and returns its path: a command that prints it
// leaks them all.
func writeLeak(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for i, name := range append(slices.Sorted(maps.Keys(formSecrets)), "password") {
		value := formSecrets[name]
		if name == "password" {
			value = databasePassword
		}
		forms := encodedForms(value)
		b.WriteString(name + ":")
		for _, kind := range slices.Sorted(maps.Keys(forms)) {
			b.WriteString(" " + forms[kind])
		}
		if i%2 == 1 {
			b.WriteString("\n")
		} else {
			b.WriteString(" ")
		}
	}
	path := filepath.Join(dir, "leak.txt")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// assertNoSecretForm fails for every form of every secret in text.
func assertNoSecretForm(t *testing.T, text, where string) {
	t.Helper()
	for what, form := range leakedForms() {
		assert.NotContains(t, text, form, "%s holds %s", where, what)
	}
}

// ralphFiles is every file under the repository's .ralph/, by path.
func ralphFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(filepath.Join(dir, ".ralph"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		out[path] = string(data)
		return err
	}))
	return out
}

// The output of a failed verify command reaches the terminal, the
// autopilot's log, state and progress file, and the ticket's note, which
// ralph commits: every form of every secret in it is hidden in each, and
// so in the base branch's history.
func TestAutopilotNeverWritesNorCommitsASecret(t *testing.T) {
	w := newAutopilotRepo(t, "  source: tk\n  verify:\n    - {type: command_succeeds, command: 'cat \"$LEAK_FILE\"; exit 1'}\n")
	leak := writeLeak(t, w.state)
	id := w.run("tk", "create", "Deploy it", "-d", "Ship the service")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "the ticket")
	w.script(taskAgent("0"))

	r := w.ralphEnv(append(secretEnv(), "LEAK_FILE="+leak), "autopilot")
	require.Equal(t, 1, r.code, "the task fails its verification\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assertNoSecretForm(t, r.stdout, "ralph autopilot's stdout")
	assertNoSecretForm(t, r.stderr, "ralph autopilot's stderr")
	assert.Contains(t, r.stderr, "[redacted:DEPLOY_TOKEN]", "the failure is shown, masked")

	files := ralphFiles(t, w.dir)
	for _, name := range []string{autopilot.EventsFile, autopilot.StateFile, autopilot.ProgressFile} {
		require.Contains(t, files, filepath.Join(w.dir, ".ralph", name))
	}
	for path, text := range files {
		assertNoSecretForm(t, text, path)
	}
	log := files[filepath.Join(w.dir, ".ralph", autopilot.EventsFile)]
	for name := range formSecrets {
		assert.Contains(t, log, "[redacted:"+name+"]", "the verify output is in the log, masked")
	}

	history := git(t, w.dir, "log", "-p", "--all")
	require.Contains(t, history, "ralph: "+id+" failed", "the ticket's note is committed")
	assert.Contains(t, history, "[redacted:DEPLOY_TOKEN]", "the note quotes the failure, masked")
	assertNoSecretForm(t, history, "the repository's history")
}

// A command tracker is told a failure's reason as RALPH_TASK_REASON, and
// its commands' stderr is quoted when they fail: neither carries a secret.
func TestAutopilotTellsACommandTrackerNoSecret(t *testing.T) {
	w := newAutopilotRepo(t, "  source:\n    type: command\n    list: cat board/*.json\n"+
		"    claim: 'cat \"$LEAK_FILE\" >&2; exit 1'\n"+
		"    close: 'true'\n"+
		"    fail: 'printf \"%s\\n\" \"$RALPH_TASK_REASON\" >> \"$LEAK_STATE/reasons\"'\n")
	leak := writeLeak(t, w.state)
	w.write("board/c-1.json", `{"id": "c-1", "title": "Deploy", "status": "open"}`+"\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "the board")

	r := w.ralphEnv(append(secretEnv(), "LEAK_FILE="+leak, "LEAK_STATE="+w.state), "autopilot")
	require.Equal(t, 1, r.code, "the claim fails\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	reasons, err := os.ReadFile(filepath.Join(w.state, "reasons"))
	require.NoError(t, err, "the tracker's fail command ran")
	assert.Contains(t, string(reasons), "claiming it in command failed", "the reason quotes the claim's stderr")
	assert.Contains(t, string(reasons), "[redacted:GH_PAT]")
	assertNoSecretForm(t, string(reasons), "RALPH_TASK_REASON")
	assertNoSecretForm(t, r.stderr, "ralph autopilot's stderr")
	for path, text := range ralphFiles(t, w.dir) {
		assertNoSecretForm(t, text, path)
	}
	assertNoSecretForm(t, git(t, w.dir, "log", "-p", "--all"), "the repository's history")
}
