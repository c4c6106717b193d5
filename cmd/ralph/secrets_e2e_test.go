package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/runfiles"
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
	return snapshot(t, filepath.Join(dir, ".ralph"))
}

// The output of a failed verify command reaches the terminal, the
// autopilot's log, state and progress file, and the ticket's note, which
// ralph commits: every form of every secret in it is hidden in each, and
// so in the base branch's history.
func TestAutopilotNeverWritesNorCommitsASecret(t *testing.T) {
	t.Parallel()
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
	for _, name := range []string{runfiles.AutopilotEventsFile, runfiles.AutopilotStateFile, runfiles.ProgressFile} {
		require.Contains(t, files, filepath.Join(w.dir, ".ralph", name))
	}
	for path, text := range files {
		assertNoSecretForm(t, text, path)
	}
	log := files[filepath.Join(w.dir, ".ralph", runfiles.AutopilotEventsFile)]
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
	t.Parallel()
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

// handLines are event lines an agent appends to its log by hand, not
// through ralph emit, with every form of every secret in their payloads, a
// topic and a target made of one, and a line that is not JSON: the log
// keeps them as written, and every reader hides them.
func handLines(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	add := func(ev map[string]any) {
		ev["source"] = "agent"
		line, err := json.Marshal(ev)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	forms := leakedForms()
	for _, what := range slices.Sorted(maps.Keys(forms)) {
		add(map[string]any{"topic": "note.leak", "payload": what + ": " + forms[what]})
	}
	add(map[string]any{"topic": "note." + formSecrets["GH_PAT"], "target": formSecrets["MYSQL_PWD"], "payload": "t"})
	add(map[string]any{"topic": "note.json", "payload": map[string]any{"dsn": formSecrets["DATABASE_URL"], "n": 1}})
	b.WriteString("not JSON, with " + formSecrets["DEPLOY_TOKEN"] + "\n")
	path := filepath.Join(dir, "hand-lines.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// leakByHand is the agent that tries ralph emit with a topic and a target
// made of secrets (both refused), then appends handLines to its log.
const leakByHand = `"$RALPH_BIN" emit "build.$DEPLOY_TOKEN" x 2>>"$SCRIPTAGENT_STATE/emit.err"
"$RALPH_BIN" emit --target "$GH_PAT" note.done y 2>>"$SCRIPTAGENT_STATE/emit.err"
cat "$HAND_LINES" >> "$RALPH_EVENTS_FILE"`

// Everything that shows a run's log, to a person or a program, hides the
// reader's secrets in lines the agent wrote by hand, which the log keeps as
// written; ralph emit refuses a topic or target made of one. The command
// line, ralph serve and ralph mcp still show the same lines byte for byte,
// and a stream's ids are still the log's offsets.
func TestReadersHideSecretsTheLogHolds(t *testing.T) {
	for _, kv := range secretEnv() {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	w := newWorkspace(t)
	w.write("ralph.yml", agentCLI()+"event_loop:\n  max_iterations: 4\n  completion_confirmations: 1\n")
	hand := handLines(t, w.state)
	w.script(agentScript{Steps: []step{{Sh: leakByHand, Say: tag("LOOP_COMPLETE", "done")}, say(tag("LOOP_COMPLETE", "done"))}})

	r := w.ralphEnv([]string{"HAND_LINES=" + hand}, "loop", "-p", "leak", "--headless")
	require.Equal(t, 0, r.code, r.stderr)
	assertNoSecretForm(t, r.stdout, "the headless stream")
	assertNoSecretForm(t, r.stderr, "ralph loop's stderr")
	emitErr, err := os.ReadFile(filepath.Join(w.state, "emit.err"))
	require.NoError(t, err, "the agent's emits failed")
	assert.Equal(t, 2, strings.Count(string(emitErr), "holds a secret value"), string(emitErr))
	assert.Contains(t, string(emitErr), `the topic "build.[redacted:DEPLOY_TOKEN]"`)
	assert.Contains(t, string(emitErr), `the target "[redacted:GH_PAT]"`)
	assertNoSecretForm(t, string(emitErr), "ralph emit's errors")

	logPath := filepath.Join(w.dir, strings.TrimSpace(w.read(".ralph/current-events")))
	raw, err := os.ReadFile(logPath)
	require.NoError(t, err)
	require.Contains(t, string(raw), formSecrets["DEPLOY_TOKEN"], "the log keeps the agent's lines as written")
	for path, text := range ralphFiles(t, w.dir) {
		if path != logPath {
			assertNoSecretForm(t, text, path)
		}
	}

	leak := strings.Index(string(raw), `"topic":"note.leak"`)
	require.Positive(t, leak)
	leakOffset := strings.LastIndexByte(string(raw[:leak]), '\n') + 1
	for _, args := range [][]string{
		{"events"}, {"events", "--json"}, {"events", "--payload"}, {"events", "--last", "5"},
		{"events", "--topic", "note.*", "--json"}, {"events", "-f"},
		{"events", "--offset", strconv.Itoa(leakOffset), "--json"}, {"events", "--offset", strconv.Itoa(leakOffset)},
		{"watch", "--once"}, {"status", "--json", "--last", "40"},
	} {
		r := w.ralph(args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		assertNoSecretForm(t, r.stdout, fmt.Sprint(args))
		assert.Contains(t, r.stdout, "[redacted:", "%v shows the agent's lines, masked", args)
	}
	cli := w.ralph("events", "--json")
	for line := range strings.Lines(cli.stdout) {
		assert.True(t, json.Valid([]byte(line)), "ralph events --json prints JSON: %s", line)
	}

	cs := mcpSession(t, w.dir)
	sameEvents(t, w, cs, map[string]any{}, map[string]any{"last": 5}, map[string]any{"topic": "note.*"})
	assertNoSecretForm(t, callTool(t, cs, "events", map[string]any{}).ok(t).text, "the MCP events tool")
	assertNoSecretForm(t, callTool(t, cs, "status", map[string]any{"last": 40}).ok(t).text, "the MCP status tool")

	s := startServe(t, w.dir)
	assertEventsAsCLI(t, w, s, "", []string{}...)
	assertEventsAsCLI(t, w, s, "topic=note.*", "--topic", "note.*")
	for _, path := range []string{"/api/events", "/api/status", "/api/iterations", "/api/dashboard"} {
		code, body := s.do(http.MethodGet, path, false, "")
		require.Equal(t, http.StatusOK, code, "%s: %s", path, body)
		assertNoSecretForm(t, body, path)
	}
	// The stream sends what --json prints, each with the log's offset of
	// the line after it as its id, so a client resumes where it was.
	want := streamedLog(t, logPath)
	es := s.stream("/api/events/stream", "")
	shown := strings.Split(strings.TrimSuffix(cli.stdout, "\n"), "\n")
	require.Len(t, shown, len(want)-1, "--json leaves out the one line that is not JSON")
	k := 0
	for _, ev := range want {
		if !json.Valid([]byte(ev.data)) {
			continue // not an event: the stream leaves it out too
		}
		got := es.next()
		assert.Equal(t, ev.id, got.id, "the id is the log's offset")
		assert.Equal(t, shown[k], got.data, "the stream sends what ralph events --json prints")
		assertNoSecretForm(t, got.data, "the event stream")
		k++
	}
	resumed := s.stream("/api/events/stream", want[len(want)-3].id)
	assert.Equal(t, want[len(want)-2].id, resumed.next().id, "a stream resumes at an offset of the log")
}

// A memory outlives the run and, shared, is committed: ralph memory add
// hides every form of a secret before it stores it, and list and search
// hide one that was written into the file by other means.
func TestMemoriesHoldNoSecret(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.write("ralph.yml", agentCLI()+"memories:\n  shared: true\n")
	forms := leakedForms()
	var text strings.Builder
	text.WriteString("deploy with")
	for _, what := range slices.Sorted(maps.Keys(forms)) {
		text.WriteString(" " + forms[what])
	}
	r := w.ralphEnv(secretEnv(), "memory", "add", text.String(), "--tag", "gh-"+formSecrets["GH_PAT"])
	require.Equal(t, 0, r.code, r.stderr)
	stored := w.read(".ralph/agent/memories.md")
	assertNoSecretForm(t, stored, "memories.md")
	assert.Contains(t, stored, "deploy with [redacted:")
	assert.Contains(t, stored, "gh-[redacted:GH_PAT]")

	w.write(".ralph/agent/memories.md", stored+"\n<!-- ralph memory: id=m-hand type=fix tags= at=2026-11-27T10:00:00Z -->\n"+
		"the deploy token is "+formSecrets["DEPLOY_TOKEN"]+"\n")
	for _, args := range [][]string{{"memory", "list"}, {"memory", "list", "--json"}, {"memory", "search", "deploy", "token"}} {
		r := w.ralphEnv(secretEnv(), args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		assertNoSecretForm(t, r.stdout, fmt.Sprint(args))
		assert.Contains(t, r.stdout, "the deploy token is [redacted:DEPLOY_TOKEN]", "%v", args)
	}
}

// sentEvents is every event line the workers publish, as the coordinator
// would copy them.
func (c *workerCluster) sentEvents() *lockedWriter {
	c.t.Helper()
	workers, err := cluster.NewKeyring(cluster.RoleWorker, c.keys.worker)
	require.NoError(c.t, err)
	sent := &lockedWriter{}
	ctx, cancel := context.WithCancel(c.t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cluster.EventsOf(ctx, c.conn.JetStream(), cluster.ConsumeOptions{Trust: workers}, func(_ context.Context, e cluster.Events) error {
			_, err := sent.Write(e.Lines)
			return err
		})
	}()
	c.t.Cleanup(func() { cancel(); <-done })
	return sent
}

// A worker forwards its loops' event lines to the coordinator, which does
// not know the worker's secrets: every form of them, and a value that only
// the worker's own config lists under redact:, is hidden in the lines it
// sends (an agent appended them to its log by hand, which ralph cannot
// stop), in its result and in what it logs.
func TestWorkerForwardsNoSecret(t *testing.T) {
	for _, kv := range secretEnv() {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	const plain = "plain-worker-value-42"
	t.Setenv("WORKER_PLAIN", plain)
	t.Setenv("HAND_LINES", handLines(t, t.TempDir()))
	c := newWorkerCluster(t, agentScript{Steps: []step{{
		Sh: `cat "$HAND_LINES" >> "$RALPH_EVENTS_FILE"
printf '{"topic":"note.plain","payload":"%s","source":"agent"}\n' "$WORKER_PLAIN" >> "$RALPH_EVENTS_FILE"`,
		Say: tag("LOOP_COMPLETE", "done"),
	}}})
	own := filepath.Join(t.TempDir(), "worker.yml")
	require.NoError(t, os.WriteFile(own, []byte(agentCLI()+"redact: [WORKER_PLAIN]\n"), 0o644))
	sent := c.sentEvents()
	w := c.startWorker("w1", "-c", own)

	c.publish(c.task("t-leak"))
	r := c.nextResult()
	require.Equal(t, 0, r.ExitCode, "%+v", r)
	waitFor(t, "the loop's last line among those sent", func() bool {
		return strings.Contains(sent.String(), `"topic":"`+runfiles.TopicLoopTerminate+`"`)
	})
	text := sent.String()
	assertNoSecretForm(t, text, "the event lines the worker sent")
	assert.NotContains(t, text, plain, "the worker's own config lists WORKER_PLAIN under redact:")
	for _, mask := range []string{"[redacted:WORKER_PLAIN]", "[redacted:GH_PAT]", "[redacted:DEPLOY_TOKEN]"} {
		assert.Contains(t, text, mask, "the agent's lines are sent, masked")
	}
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, "{") {
			assert.True(t, json.Valid([]byte(line)), "a JSON line stays JSON: %s", line)
		}
	}
	assertNoSecretForm(t, fmt.Sprintf("%+v", r), "the result")
	assertNoSecretForm(t, w.stderr.String(), "the worker's log")
	assert.NotContains(t, w.stderr.String(), plain)
}

// A hook is told the lines of the log, which an agent may append to by
// hand with a topic made of a secret: the hook is told none, in its
// environment (RALPH_EVENT_TOPIC) or on its stdin.
func TestHooksAreToldNoSecret(t *testing.T) {
	for _, kv := range secretEnv() {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	w := newWorkspace(t)
	hooked := filepath.Join(w.state, "hooked")
	w.write("ralph.yml", agentCLI()+"event_loop:\n  max_iterations: 4\n  completion_confirmations: 1\n"+
		"hooks:\n  - name: seen\n    on: [\"note.*\"]\n    run: '{ echo \"$RALPH_EVENT_TOPIC\"; cat; echo; } >> "+hooked+"'\n")
	w.script(agentScript{Steps: []step{{
		Sh: `printf '{"topic":"note.%s","payload":"a","source":"agent"}\n' "$GH_PAT" >> "$RALPH_EVENTS_FILE"
printf '{"topic":"note.done","payload":"key %s","source":"agent"}\n' "$MYSQL_PWD" >> "$RALPH_EVENTS_FILE"`,
		Say: tag("LOOP_COMPLETE", "done"),
	}}})

	r := w.ralph("loop", "-p", "leak", "--headless")
	require.Equal(t, 0, r.code, r.stderr)
	seen, err := os.ReadFile(hooked)
	require.NoError(t, err, "the hook ran on the agent's lines")
	assert.Contains(t, string(seen), "note.done\n", "the hook is told the line that holds no secret in its topic")
	assert.Contains(t, string(seen), "key [redacted:MYSQL_PWD]")
	assertNoSecretForm(t, string(seen), "what the hook was told")
	assertNoSecretForm(t, r.stdout, "the headless stream")
	for path, text := range ralphFiles(t, w.dir) {
		if !strings.HasPrefix(filepath.Base(path), "events-") {
			assertNoSecretForm(t, text, path)
		}
	}
}
