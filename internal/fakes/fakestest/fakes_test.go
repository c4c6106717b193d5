package fakestest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fakes replay the captured sessions of tasks/testdata (real tk and
// bd) and must print the same, once ids and times are replaced.

var stamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)

type session struct {
	t    *testing.T
	dir  string
	bin  string
	ids  map[string]string // the fake's id → the fixture's
	time string
}

func newSession(t *testing.T, time string) *session {
	bin := Install(t)
	dir := filepath.Join(t.TempDir(), "demo-repo")
	require.NoError(t, os.Mkdir(dir, 0o755))
	gitconfig := filepath.Join(t.TempDir(), "gitconfig")
	require.NoError(t, os.WriteFile(gitconfig, []byte("[user]\n\tname = dev\n\temail = dev@example.com\n"), 0o644))
	t.Setenv("GIT_CONFIG_GLOBAL", gitconfig)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("FAKE_BD_ENVELOPE", "")
	return &session{t: t, dir: dir, bin: bin, ids: map[string]string{}, time: time}
}

// run runs a fake and returns its output with the fixture's ids and time.
func (s *session) run(name string, args ...string) string {
	s.t.Helper()
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	out, err := cmd.CombinedOutput()
	require.NoError(s.t, err, "%s %v: %s", name, args, out)
	return s.norm(string(out))
}

// norm gives text the fixture's ids and time.
func (s *session) norm(text string) string {
	for fake, real := range s.ids {
		text = strings.ReplaceAll(text, fake, real)
	}
	return stamp.ReplaceAllString(text, s.time)
}

// fixture is the output of the nth command of a captured session.
func fixture(t *testing.T, name string, n int) string {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "tasks", "testdata", name))
	require.NoError(t, err)
	var outs []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "$ "):
			outs = append(outs, "")
		case strings.HasPrefix(l, "[exit "):
		case len(outs) > 0:
			outs[len(outs)-1] += l
		}
	}
	require.Greater(t, len(outs), n)
	return outs[n]
}

func TestFakeTkPrintsWhatTkPrints(t *testing.T) {
	s := newSession(t, "2026-11-23T16:26:48Z")
	id := func(real string, args ...string) {
		fake := strings.TrimSpace(s.run("tk", append([]string{"create"}, args...)...))
		assert.Regexp(t, `^dr-[a-z0-9]{4}$`, fake)
		s.ids[fake] = real
	}
	id("dr-qhah", "Add the export command", "-p", "1", "-d", "Users need to export data as CSV.",
		"--acceptance", "ralph export writes a CSV", "--tags", "component:cli,feature")
	id("dr-ep7r", "Write the CSV encoder", "-p", "0", "-d", "An encoder with RFC 4180 quoting.", "--tags", "component:cli")
	id("dr-nc1l", "Document export", "-d", "README section.")
	s.run("tk", "dep", fakeID(s, "dr-nc1l"), fakeID(s, "dr-qhah"))

	assert.Equal(t, fixture(t, "tk/ready.txt", 0), s.run("tk", "ready"))
	assert.Equal(t, fixture(t, "tk/show.txt", 0), s.run("tk", "show", fakeID(s, "dr-qhah")))
	assert.Equal(t, fixture(t, "tk/show-with-dep.txt", 0), s.run("tk", "show", fakeID(s, "dr-nc1l")))
	data, err := os.ReadFile(filepath.Join(s.dir, ".tickets", fakeID(s, "dr-qhah")+".md"))
	require.NoError(t, err)
	want, _ := os.ReadFile("../../../tasks/testdata/tk/ticket-file.md")
	assert.Equal(t, string(want), s.norm(string(data)))

	e := fakeID(s, "dr-ep7r")
	for i, args := range [][]string{{"start", e}, {"ready"}, {"add-note", e, "merged in abc123"}, {"close", e}, {"ready"}, {"closed"}, {"blocked"}} {
		assert.Equal(t, fixture(t, "tk/lifecycle.txt", i), s.run("tk", args...), "tk %v", args)
	}
	data, err = os.ReadFile(filepath.Join(s.dir, ".tickets", e+".md"))
	require.NoError(t, err)
	want, _ = os.ReadFile("../../../tasks/testdata/tk/ticket-file-closed.md")
	assert.Equal(t, string(want), s.norm(string(data)))
	assert.Equal(t, fixture(t, "tk/help.txt", 0), s.run("tk", "--help"))
}

func fakeID(s *session, real string) string {
	for fake, r := range s.ids {
		if r == real {
			return fake
		}
	}
	s.t.Fatalf("no fake id for %s", real)
	return ""
}

func TestFakeBdPrintsWhatBdPrints(t *testing.T) {
	s := newSession(t, "2026-11-23T16:26:55Z")
	s.run("bd", "init")
	create := func(real string, args ...string) {
		out := s.run("bd", append([]string{"create"}, append(args, "--json")...)...)
		var v struct {
			ID string `json:"id"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &v))
		assert.Regexp(t, `^demo-repo-[a-z0-9]{3}$`, v.ID)
		s.ids[v.ID] = real
		if real == "demo-repo-rn4" {
			want := stamp.ReplaceAllString(fixture(t, "bd/create-json.txt", 0), s.time)
			assert.Equal(t, want, strings.ReplaceAll(out, v.ID, real))
		}
	}
	create("demo-repo-rn4", "Add the export command", "-p", "1", "-d", "Users need to export data as CSV.",
		"--acceptance", "ralph export writes a CSV", "--labels", "component:cli,feature")
	create("demo-repo-4n7", "Write the CSV encoder", "-p", "0", "-d", "An encoder with RFC 4180 quoting.", "--labels", "component:cli")
	create("demo-repo-4z2", "Document export", "-d", "README section.")
	norm := func(s string) string { return stamp.ReplaceAllString(s, "T") }

	assert.Equal(t, fixture(t, "bd/dep-add.txt", 0), s.run("bd", "dep", "add", fakeID(s, "demo-repo-4z2"), fakeID(s, "demo-repo-rn4")))
	assert.Equal(t, norm(fixture(t, "bd/ready-json.txt", 0)), norm(s.run("bd", "ready", "--json")))
	assert.Equal(t, fixture(t, "bd/ready.txt", 0), s.run("bd", "ready"))
	assert.Equal(t, norm(fixture(t, "bd/show-json.txt", 0)), norm(s.run("bd", "show", fakeID(s, "demo-repo-rn4"), "--json")))

	e := fakeID(s, "demo-repo-4n7")
	before, err := os.ReadFile(filepath.Join(s.dir, ".beads", "interactions.jsonl"))
	require.NoError(t, err)
	for i, args := range [][]string{
		{"update", e, "--status", "in_progress", "--json"}, {"ready", "--json"},
		{"close", e, "--reason", "merged in abc123", "--json"}, {"list", "--status", "closed", "--json"}, {"ready", "--json"},
	} {
		assert.Equal(t, norm(fixture(t, "bd/lifecycle-json.txt", i)), norm(s.run("bd", args...)), "bd %v", args)
	}
	after, err := os.ReadFile(filepath.Join(s.dir, ".beads", "interactions.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(after[len(before):]), "\n"), "a line for each change of status")
	assert.Contains(t, string(after), `"kind":"field_change"`)
	ignore, err := os.ReadFile(filepath.Join(s.dir, ".beads", ".gitignore"))
	require.NoError(t, err)
	assert.Contains(t, string(ignore), "fake.db.json")
	assert.Equal(t, fixture(t, "bd/version.txt", 0), s.run("bd", "--version"))

	cmd := exec.Command(filepath.Join(s.bin, "bd"), "show", "nope", "--json")
	cmd.Dir = s.dir
	out, err := cmd.CombinedOutput()
	assert.Error(t, err)
	assert.Equal(t, "Error fetching nope: no issue found matching \"nope\"\n", string(out))
}
