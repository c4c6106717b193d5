package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
)

// The page's end-to-end test: a real `ralph serve` beside a real two-slot
// autopilot, its page loaded in headless Chromium, asserted on through the
// DOM while the autopilot runs, and driven through the page's own buttons.

// pageConfig is a repository whose tasks a builder hat does, handed each
// task by the coordinator.
const pageConfig = `event_loop:
  max_iterations: 8
  completion_confirmations: 1
hats:
  builder:
    name: Builder
    triggers: [build.task]
    publishes: [build.done]
    instructions: Build it.
autopilot:
  source: {type: checklist, path: TODO.md}
  parallel: 2
`

// pageAgent is each task's agent. The coordinator hands the task to the
// builder, and completes it once the task's file exists and the test has
// created $SCRIPTAGENT_STATE/finish. The builder of task one first asks a
// question; every builder then waits for $SCRIPTAGENT_STATE/release before
// it writes the task's file. So the test decides when each thing happens.
const pageAgent = `task=$(basename "$PWD")
wait_for() { while [ ! -e "$SCRIPTAGENT_STATE/$1" ]; do sleep 0.05; done; }
if [ "$RALPH_HAT" = ralph ]; then
	if [ -e "$task.txt" ]; then wait_for finish; echo '<event topic="LOOP_COMPLETE">done</event>'
	else echo '<event topic="build.task">go</event>'; fi
	exit 0
fi
if [ "$task" = one ] && [ ! -e "$SCRIPTAGENT_STATE/asked" ]; then
	touch "$SCRIPTAGENT_STATE/asked"
	exec "$RALPH_BIN" ask "Which database?" --option postgres --option sqlite
fi
wait_for release
echo "$task" > "$task.txt"
echo '<event topic="build.done">built</event>'
`

func TestServePageAutopilotE2E(t *testing.T) {
	t.Parallel()
	browser := pageChromium(t)
	w := newAutopilotRepo(t, "")
	w.write("ralph.yml", agentCLI()+pageConfig)
	w.write("TODO.md", "- [ ] One\n- [ ] Two\n- [ ] Three\n")
	git(t, w.dir, "add", "-A")
	git(t, w.dir, "commit", "-q", "-m", "tasks")
	w.script(agentScript{Steps: []step{{Sh: pageAgent, Commit: "do the task"}}})
	ap, apStderr := w.startRalph("autopilot")
	url, _ := pageServe(t, w, "127.0.0.1:0")

	p := openPage(t, browser, apStderr)
	do, text, visible, click, shot := p.do, p.text, p.visible, p.click, p.shot
	tab := p.tab

	do("the page shows both slots", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(url),
		visible(`#slots li[data-task="one"]`), visible(`#slots li[data-task="two"]`),
		visible(`#autopilot-state[data-state="running"]`))
	href, err := chromedp.Run(tab, chromedp.Location())
	require.NoError(t, err)
	assert.NotContains(t, href, "token", "the page takes the token out of the address bar")

	do("slot one's loop, its question, iterations and events",
		click(`#slots li[data-task="one"] button`), visible(`#slots li.selected[data-task="one"]`),
		visible(`#question`), visible(`#answer-text`), visible(`#question-options [data-option="postgres"]`),
		visible(`#iterations tr[data-iteration="1"][data-hat="ralph"]`),
		visible(`#iterations tr[data-iteration="2"][data-hat="builder"]`),
		visible(`#events li[data-topic="human.asked"]`),
		visible(`#graph [data-node="builder"]`), chromedp.WaitReady(chromedp.CSS(`#chart rect[data-iteration="2"]`)))
	assert.Equal(t, "Which database?", text(`#question-text`))
	assert.NotEmpty(t, text(`#run-id`))
	offsets, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#events li")].map(li => li.dataset.offset)`))
	require.NoError(t, err)
	require.NotEmpty(t, offsets)
	assert.Equal(t, "0", offsets[0], "the first event is the log's first line")
	shot("1-two-slots-and-a-question")
	if path := os.Getenv("RALPH_SERVE_SCREENSHOT"); path != "" {
		png, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, png, 0o644))
	}

	// Pause through the page: the autopilot writes its pause to its log,
	// and the page shows it.
	do("pause", click(`#pause`), visible(`#autopilot-state[data-state="paused"]`), visible(`#resume`))
	waitFor(t, "autopilot.paused in the autopilot's log", func() bool {
		return strings.Contains(pageFile(filepath.Join(w.dir, ".ralph", runfiles.AutopilotEventsFile)), `"topic":"`+runfiles.TopicAutopilotPaused+`"`)
	})
	assert.Contains(t, text(`#status`), "to pause")
	// Resume and pause again: both slots are busy, so no task starts
	// meanwhile.
	do("resume", click(`#resume`), visible(`#autopilot-state[data-state="running"]`), visible(`#pause`))
	waitFor(t, "autopilot.resumed in the autopilot's log", func() bool {
		return strings.Contains(pageFile(filepath.Join(w.dir, ".ralph", runfiles.AutopilotEventsFile)), `"topic":"`+runfiles.TopicAutopilotResumed+`"`)
	})
	assert.Contains(t, text(`#status`), "to resume")
	do("pause again", click(`#pause`), visible(`#autopilot-state[data-state="paused"]`))
	waitFor(t, "the second autopilot.paused", func() bool {
		return strings.Count(pageFile(filepath.Join(w.dir, ".ralph", runfiles.AutopilotEventsFile)), `"topic":"`+runfiles.TopicAutopilotPaused+`"`) == 2
	})

	// Answer through the page: the loop's log records the answer, by the
	// API, and the page's event stream shows it.
	do("answer", chromedp.SendKeys(chromedp.CSS(`#answer-text`), "postgres, please"), click(`#answer`),
		visible(`#events li[data-topic="human.answered"]`))
	taskLog, _, err := runfiles.TaskLog(w.dir, "one")
	require.NoError(t, err)
	answered := regexp.MustCompile(`"topic":"human.answered".*"answer":"postgres, please".*"by":"api"`)
	waitFor(t, "human.answered in task one's log", func() bool { return answered.MatchString(pageFile(taskLog)) })
	do("the question is gone", chromedp.WaitNotPresent(chromedp.CSS(`#question[data-id]`)))

	// The builders go on: a third iteration appears in slot one's table
	// while it runs.
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
	do("iteration 3 appears", visible(`#iterations tr[data-iteration="3"][data-hat="builder"]`),
		visible(`#events li[data-topic="build.done"]`), chromedp.WaitReady(chromedp.CSS(`#graph [data-node="ralph"].current`)))
	shot("2-answered-and-paused")
	dark(t, tab)
	shot("2-answered-and-paused-dark")
	dark(t, tab, "light")

	// Both tasks finish; paused, the autopilot starts no third.
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "finish"), nil, 0o644))
	do("both tasks completed", visible(`#autopilot-counts [data-count="completed"]`),
		chromedp.Poll[chromedp.Void](`document.querySelector('#autopilot-counts [data-count="completed"] dd').textContent === "2"`,
			chromedp.WithPollingTimeout(time.Minute)),
		visible(`#slots-empty`))
	shot("3-completed")

	// Stop through the page (it asks twice).
	do("stop", click(`#stop`), visible(`#stop.armed`), click(`#stop`))
	require.Equal(t, 0, exitCodeOf(ap.Wait()), apStderr.String())
	do("the page shows the end", visible(`#autopilot-state[data-state="ended"]`))
	shot("4-stopped")

	// A filter the API refuses: its error and hint in the status line.
	do("a bad filter", chromedp.SendKeys(chromedp.CSS(`#filter-topic`), "build..done"), click(`#filter-apply`),
		visible(`#status[data-state="error"] .hint`))
	assert.Contains(t, text(`#status`), "topic")
	assert.Contains(t, w.read("TODO.md"), "- [ ] Three", "no task starts after a pause")
	assert.ElementsMatch(t, []string{"one", "two"}, w.mergedOrder())
}

// pageLoopConfig is a lone loop whose builder does the work the coordinator
// hands it (pageAgent's).
const pageLoopConfig = `event_loop:
  prompt: Build it.
  max_iterations: 8
  completion_confirmations: 1
hats:
  builder:
    name: Builder
    triggers: [build.task]
    publishes: [build.done]
    instructions: Build it.
`

func TestServePageLoopE2E(t *testing.T) {
	t.Parallel()
	browser := pageChromium(t)
	w := newWorkspace(t)
	w.write("ralph.yml", agentCLI()+pageLoopConfig)
	w.script(agentScript{Steps: []step{{Sh: pageAgent}}})
	url, serve := pageServe(t, w, "127.0.0.1:0")
	p := openPage(t, browser, &lockedWriter{}) // the loop's stderr, once it runs
	do, text, visible, click := p.do, p.text, p.visible, p.click

	// Nothing runs yet; then a loop starts, and the page shows it.
	do("an idle workspace", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(url),
		visible(`#kind[data-kind="none"]`), visible(`#status[data-idle]`))
	loop, stderr := w.startRalph("loop")
	p.stderr = stderr
	do("the loop, its hat, iterations and events", visible(`#kind[data-kind="loop"]`),
		chromedp.WaitNotPresent(chromedp.CSS(`#status[data-idle]`)), visible(`#loop[data-phase]`),
		chromedp.WaitNotVisible(chromedp.CSS(`#autopilot`)), chromedp.WaitReady(chromedp.CSS(`#graph [data-node="builder"].current`)),
		visible(`#iterations tr[data-iteration="1"][data-hat="ralph"]`), visible(`#events li[data-topic="build.task"]`),
		chromedp.WaitEnabled(chromedp.CSS(`#stop`)))
	do("the agent's activity", visible(`#activity li[data-kind="text"][data-iteration="1"]`))
	assert.Contains(t, text(`#activity li[data-iteration="1"]`), `<event topic="build.task">go</event>`, "what the coordinator's agent said")
	assert.Equal(t, "builder", text(`#hat`))
	assert.Regexp(t, `^2 / 8$`, text(`#iteration`))
	p.shot("1-loop")

	// Only iteration.* events, from the log's start.
	onlyIterations := `(() => { const li = [...document.querySelectorAll("#events li")];
		return li.length >= 4 && li.every(l => l.dataset.topic.startsWith("iteration.")) })()`
	do("the topic filter", chromedp.SendKeys(chromedp.CSS(`#filter-topic`), "iteration.*"), click(`#filter-apply`),
		chromedp.Poll[chromedp.Void](onlyIterations, chromedp.WithPollingTimeout(time.Minute)))

	// ralph serve restarts on the same address: the page says it lost the
	// connection, reconnects, and goes on from the last event it had.
	addr := strings.TrimPrefix(strings.Split(url, "/#")[0], "http://")
	require.NoError(t, serve.Process.Kill())
	_ = serve.Wait()
	do("the page sees the server gone", visible(`#conn[data-state="reconnecting"]`))
	pageServe(t, w, addr)
	do("the page reconnects", visible(`#conn[data-state="live"]`), chromedp.WaitNotPresent(chromedp.CSS(`#status[data-lost]`)))

	// Guidance typed into the page while the builder works reaches the
	// next iteration's prompt, and only that one.
	do("guide the loop", chromedp.SendKeys(chromedp.CSS(`#guidance-text`), "from the page: keep it small"), click(`#guide`),
		chromedp.Poll[chromedp.Void](`document.querySelector("#status").textContent.startsWith("guidance sent")`, chromedp.WithPollingTimeout(time.Minute)))
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "release"), nil, 0o644))
	do("the builder's iteration appears", visible(`#iterations tr[data-iteration="2"][data-hat="builder"]`),
		chromedp.WaitReady(chromedp.CSS(`#graph [data-node="ralph"].current`)))
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "finish"), nil, 0o644))
	require.NoError(t, loop.Wait(), stderr.String())
	do("the run's end", visible(`#loop-state[data-state="ended"]`), visible(`#loop-ended`),
		chromedp.WaitReady(chromedp.CSS(`#graph [data-node="_done"].current`)), visible(`#iterations tr[data-iteration="3"][data-hat="ralph"]`), chromedp.Poll[chromedp.Void](`document.querySelector("#stop").disabled`))
	p.shot("2-ended")
	assert.Contains(t, w.prompt(3), "## 1. `human.guidance` from a person\n\n```text\nfrom the page: keep it small\n```")
	assert.NotContains(t, w.prompt(2), "from the page")
	for n := 4; fileExists(filepath.Join(w.state, "prompt-"+strconv.Itoa(n)+".txt")); n++ {
		assert.NotContains(t, w.prompt(n), "from the page", "prompt %d", n)
	}
	// The command backend reports no cost: unknown, in the card, each
	// iteration's row and the chart's scale, never $0.
	assert.Equal(t, "unknown", text(`#cost`))
	assert.Equal(t, "unknown", text(`#iterations tr[data-iteration="1"] td[data-cost-source]`))
	// ralph's own lines in the words of `ralph events`, not JSON.
	assert.Regexp(t, `^ralph success .* cost unknown$`, text(`#events li[data-topic="iteration.finished"] .payload`))
	scale, err := chromedp.Run(p.tab, chromedp.Evaluate[string](`document.querySelector("#chart text.cost").firstChild.nodeValue`))
	require.NoError(t, err)
	assert.Equal(t, "unknown", scale)

	// Every iteration.* line of the log, once each, in order, across the
	// reconnect.
	var want []string
	for _, r := range w.events() {
		if r.Err == nil && strings.HasPrefix(r.Event.Topic, "iteration.") {
			want = append(want, strconv.FormatInt(r.Offset, 10))
		}
	}
	do("read the events' offsets", chromedp.Poll[chromedp.Void](
		fmt.Sprintf(`document.querySelectorAll("#events li").length >= %d`, len(want)), chromedp.WithPollingTimeout(time.Minute)))
	got, err := chromedp.Run(p.tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#events li")].map(li => li.dataset.offset)`))
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// pageTab is the test's tab on ralph serve's page.
type pageTab struct {
	t     *testing.T
	tab   context.Context
	shots string
	// stderr is what the run printed, shown when a step fails.
	stderr *lockedWriter
}

// openPage starts the browser and names where its screenshots go.
func openPage(t *testing.T, browser string, stderr *lockedWriter) *pageTab {
	t.Helper()
	return &pageTab{t: t, tab: pageBrowser(t, browser), shots: pageArtefacts(t), stderr: stderr}
}

// do runs the actions, each wait of them for up to a minute.
func (p *pageTab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.tab, time.Minute)
	defer cancel()
	require.NoError(p.t, chromedp.Do(ctx, actions...), "%s\nthe run printed:\n%s", what, p.stderr.String())
}

// text is the visible text of the first element sel matches.
func (p *pageTab) text(sel string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.tab, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(p.t, err, sel)
	return s
}

func (p *pageTab) visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}

func (p *pageTab) click(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.CSS(sel))
}

// shot saves a screenshot of the whole page as name.png.
func (p *pageTab) shot(name string) {
	p.t.Helper()
	png, err := chromedp.Run(p.tab, chromedp.FullScreenshot(100))
	require.NoError(p.t, err)
	require.NoError(p.t, os.WriteFile(filepath.Join(p.shots, name+".png"), png, 0o644))
}

// dark shows the page as a browser set to a dark colour scheme does (or
// another scheme, light).
func dark(t *testing.T, tab context.Context, scheme ...string) {
	t.Helper()
	value := "dark"
	if len(scheme) > 0 {
		value = scheme[0]
	}
	_, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: value}}})
	require.NoError(t, err)
}

// pageChromium is the browser the page's test drives: $RALPH_CHROMIUM, or
// the first Chromium on PATH. Without one the test skips, saying so.
func pageChromium(t *testing.T) string {
	t.Helper()
	if path := os.Getenv("RALPH_CHROMIUM"); path != "" {
		return path
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("RALPH_SERVE_SCREENSHOT") != "" {
		t.Fatal("no Chromium found to take the screenshot: install Debian's chromium package, or set RALPH_CHROMIUM")
	}
	t.Skip("no Chromium found (install Debian's chromium package, or set RALPH_CHROMIUM): the page's browser test skips")
	return ""
}

// pageBrowser starts a headless Chromium for the test, closed at its end,
// and returns the context of its tab; an exception thrown on the page, or an
// error it logs, fails the test.
func pageBrowser(t *testing.T, path string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1280, 800),
		chromedp.WSURLReadTimeout(90*time.Second))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root in its sandbox
	}
	ctx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(ctx)
	messages := chromedp.Console(tab) // starts the browser
	var logged, thrown []string       // read once the reader below has stopped
	read := make(chan struct{})
	go func() {
		defer close(read)
		for m, err := range messages {
			if err != nil {
				return
			}
			switch {
			case m.Source == "network":
				logged = append(logged, m.Text) // a refused request, which the page shows in its status line
			case m.Type == chromedp.ConsoleException || m.Type == chromedp.ConsoleError:
				thrown = append(thrown, fmt.Sprintf("%s %s:%d: %s", m.Type, m.URL, m.Line, m.Text))
			}
		}
	}()
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		<-read
		for _, m := range logged {
			t.Logf("the browser: %s", m)
		}
		for _, m := range thrown {
			t.Errorf("the page's console: %s", m)
		}
	})
	require.NoError(t, chromedp.Do(tab), "start %s", path)
	return tab
}

// pageServe starts `ralph serve` on addr beside what runs in w and
// returns the address it prints, with its token, and the process.
func pageServe(t *testing.T, w *workspace, addr string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(ralphBin, "serve", "-C", w.dir, "--addr", addr)
	cmd.Env = serveEnv()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &lockedWriter{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	listening := regexp.MustCompile(`listening on (http://\S+/#token=\S+)`)
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return m[1], cmd
		}
	}
	t.Fatalf("ralph serve printed no address: %s", stderr.String())
	return "", nil
}

// pageArtefacts is where the test saves its screenshots: $RALPH_ARTEFACTS
// (make test sets it), else a temporary directory.
func pageArtefacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("RALPH_ARTEFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	dir = filepath.Join(dir, t.Name())
	require.NoError(t, os.MkdirAll(dir, 0o755))
	t.Logf("screenshots in %s", dir)
	return dir
}

func pageFile(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}
