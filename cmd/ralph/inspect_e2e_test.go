package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inspectSecret is planted in the objective and in ralph's environment,
// under a name ralph knows to hide.
const inspectSecret = "sk-ant-inspect-7d3f9a1c5e"

// inspectMarkup is in the objective, for the pages that must escape it.
const inspectMarkup = `Never write <script>alert("x")</script> & co.`

// inspectedRun runs the two-hat loop whose objective quotes a secret: the
// builder (iteration 2) commits hello.txt, the reviewer (iteration 3)
// leaves review.md uncommitted.
func inspectedRun(t *testing.T) *workspace {
	t.Helper()
	w := newWorkspace(t)
	w.write("README.md", "project\n")
	git(t, w.dir, "add", ".")
	git(t, w.dir, "commit", "-qm", "start")
	sc := twoHatScript()
	sc.ByHat["builder"] = []step{{Write: map[string]string{"hello.txt": "hello\n"}, Commit: "add hello.txt",
		Emit: []scriptEmit{{Topic: "build.done", Payload: "wrote hello.txt"}}}}
	sc.ByHat["reviewer"] = []step{{Write: map[string]string{"review.md": "looks right\n"},
		Say: "Looks right. " + tag("review.approved", "hello.txt is correct")}}
	w.script(sc)
	w.write("ralph.yml", strings.Replace(twoHatConfig, "have it reviewed.", "have it reviewed. The deploy key is "+inspectSecret+". "+inspectMarkup, 1)+agentCLI())
	r := w.ralphEnv([]string{"TEST_API_KEY=" + inspectSecret}, "loop")
	require.Equal(t, 0, r.code, r.stderr)
	return w
}

func (w *workspace) inspect(args ...string) result {
	w.t.Helper()
	return w.ralphEnv([]string{"TEST_API_KEY=" + inspectSecret}, append([]string{"inspect"}, args...)...)
}

func TestInspectShowsWhatEachIterationWasToldDidAndChanged(t *testing.T) {
	t.Parallel()
	w := inspectedRun(t)

	t.Run("prompt", func(t *testing.T) {
		r := w.inspect("prompt", "2")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "Create hello.txt and have it reviewed.", "the objective")
		assert.Contains(t, r.stdout, "Build it.", "the builder's instructions")
		assert.Contains(t, r.stdout, inspectMarkup, "the terminal shows the text as it is")
		assert.Contains(t, r.stdout, "[redacted:TEST_API_KEY]")
		assert.NotContains(t, r.stdout, inspectSecret)
		assert.Empty(t, r.stderr)
		assert.Equal(t, strings.TrimRight(w.prompt(2), "\n")+"\n", r.stdout, "the prompt the agent got")
	})

	t.Run("the kept files hold no secret", func(t *testing.T) {
		err := filepath.WalkDir(filepath.Join(w.dir, ".ralph"), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || filepath.Base(path) == "tree.index" {
				return err
			}
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.NotContains(t, string(data), inspectSecret, path)
			return nil
		})
		require.NoError(t, err)
	})

	t.Run("prompt --json", func(t *testing.T) {
		r := w.inspect("prompt", "3", "--json")
		require.Equal(t, 0, r.code, r.stderr)
		var p struct {
			Iteration int    `json:"iteration"`
			Hat       string `json:"hat"`
			File      string `json:"file"`
			Bytes     int    `json:"bytes"`
			SHA256    string `json:"sha256"`
			Intact    bool   `json:"intact"`
			Text      string `json:"text"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &p), r.stdout)
		assert.Equal(t, 3, p.Iteration)
		assert.Equal(t, "reviewer", p.Hat)
		assert.True(t, p.Intact)
		assert.Regexp(t, `^\.ralph/runs/[^/]+/prompt-0003\.md$`, p.File)
		assert.Len(t, p.Text, p.Bytes)
		assert.Contains(t, p.Text, "Review it.")
	})

	t.Run("diff of a commit", func(t *testing.T) {
		r := w.inspect("diff", "2")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "made 1 commit(s):")
		assert.Contains(t, r.stdout, "add hello.txt")
		assert.Contains(t, r.stdout, "+++ b/hello.txt")
		assert.NotContains(t, r.stdout, "review.md", "the reviewer's change is not the builder's")
	})

	t.Run("diff of uncommitted work, as JSON", func(t *testing.T) {
		r := w.inspect("diff", "3", "--json")
		require.Equal(t, 0, r.code, r.stderr)
		var d struct {
			Commits []struct{ Subject string } `json:"commits"`
			Patch   string                     `json:"patch"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout)
		assert.Empty(t, d.Commits)
		assert.Contains(t, d.Patch, "+looks right")
		assert.NotContains(t, d.Patch, "hello.txt")
		assert.Contains(t, git(t, w.dir, "status", "--porcelain"), "?? review.md", "the user's index is as it was")
	})

	t.Run("two prompts compared", func(t *testing.T) {
		r := w.inspect("diff", "2", "3")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "--- prompt-0002.md\n+++ prompt-0003.md\n")
		assert.Contains(t, r.stdout, "-Build it.")
		assert.Contains(t, r.stdout, "+Review it.")
		assert.NotContains(t, r.stdout, inspectSecret)
	})

	t.Run("output", func(t *testing.T) {
		r := w.inspect("output", "3", "--json")
		require.Equal(t, 0, r.code, r.stderr)
		var o struct {
			Outcome   string   `json:"outcome"`
			FinalText string   `json:"final_text"`
			Activity  []string `json:"activity"`
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &o), r.stdout)
		assert.Equal(t, "success", o.Outcome)
		assert.Contains(t, o.FinalText, "Looks right.")
		text := w.inspect("output", "3")
		require.Equal(t, 0, text.code, text.stderr)
		assert.Contains(t, text.stdout, "final text:\n  Looks right.")
	})

	t.Run("an iteration that does not exist", func(t *testing.T) {
		r := w.inspect("prompt", "40")
		assert.Equal(t, 3, r.code)
		assert.Regexp(t, `ralph: error: run \S+ has no iteration 40: it has iterations 1–\d`, r.stderr)
		assert.Contains(t, r.stderr, "ralph: hint:")
	})
}

func TestServeShowsAnIterationsPageEscaped(t *testing.T) {
	t.Parallel()
	w := inspectedRun(t)
	s := startServe(t, w.dir)

	code, page := s.do(http.MethodGet, "/iteration/2", false, "")
	require.Equal(t, http.StatusOK, code, page)
	assert.Contains(t, page, "Never write &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; co.", "the prompt, escaped")
	assert.NotContains(t, page, "<script>alert")
	assert.Contains(t, page, "Build it.")
	assert.Contains(t, page, "add hello.txt", "the iteration's commit")
	assert.Contains(t, page, "&#43;hello", "its patch")
	assert.Regexp(t, `<a href="/iteration/3\?run=[0-9a-f-]+">3</a>`, page)
	assert.NotContains(t, page, inspectSecret)

	var v struct {
		Iteration int `json:"iteration"`
		Prompt    struct {
			Text string `json:"text"`
		} `json:"prompt"`
		Diff struct {
			Patch string `json:"patch"`
		} `json:"diff"`
	}
	s.getJSON("/api/iterations/3", &v)
	assert.Equal(t, 3, v.Iteration)
	assert.Contains(t, v.Prompt.Text, "Review it.")
	assert.Contains(t, v.Diff.Patch, "+looks right")

	code, body := s.do(http.MethodGet, "/api/iterations/40", false, "")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Contains(t, body, "has no iteration 40")
}

func TestWatchOpensAnIterationsPromptOutputAndDiff(t *testing.T) {
	t.Parallel()
	tm := newTmux(t)
	w := inspectedRun(t)
	ts := tm.session("watch", 100, 40, []string{"TEST_API_KEY=" + inspectSecret}, watchShell(w.dir))
	ts.waitFor("loop.terminate")
	ts.keys("Home")
	ts.waitFor("events (f follows)")
	// The first events are the run's own; the first of an iteration
	// opens it.
	opened := regexp.MustCompile(`── iteration \d+ · prompt, output, diff`)
	for range 8 {
		ts.keys("i")
		screen := ts.waitForMatch(regexp.MustCompile(opened.String() + `|belongs to no iteration`))
		if opened.MatchString(screen) {
			break
		}
		ts.keys("j")
		ts.waitFor("enter payload")
	}
	screen := ts.waitForMatch(opened)
	t.Logf("an iteration:\n%s", screen)
	assert.Contains(t, screen, "== prompt (hat ralph")
	assert.Contains(t, screen, "Create hello.txt and have it reviewed.")
	assert.Contains(t, screen, "[redacted:TEST_API_KEY]")
	assert.NotContains(t, screen, inspectSecret)
	assertFits(t, screen, 100, 40)
	ts.keys("Escape")
	ts.waitFor("events (f follows)")
	ts.keys("q")
	ts.waitFor("WATCH-EXIT=0")
}
