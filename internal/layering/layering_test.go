package layering

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/ralph-loop/ralph/"

// allowed lists, for each package, the ralph packages it may import, with
// the reason. cmd/ralph may import everything and is not listed.
//
// internal/procgroup, internal/suggest, internal/fileholders,
// internal/redact, internal/plural, internal/tail and internal/excerpt are helpers, not domain: leaves that import nothing of
// ralph's, shared by the domain packages that need them. events is not
// among those: it stays a leaf with no ralph imports.
var allowed = map[string]struct {
	imports []string
	why     string
}{
	"events":                      {nil, "the vocabulary everything else speaks; a leaf"},
	"hats":                        {[]string{"events", "internal/suggest", "internal/excerpt"}, "hat choice and prompts need events only (and a did-you-mean helper, and the excerpt of a payload too long to show whole)"},
	"criteria":                    {[]string{"events", "internal/procgroup", "internal/shell", "internal/suggest", "internal/plural", "internal/tail", "internal/git"}, "checks are independent of the loop; commands run in a process group, with the shell internal/shell finds"},
	"backends":                    {[]string{"events", "internal/procgroup", "internal/suggest", "internal/redact", "internal/tail", "internal/excerpt", "internal/sandbox"}, "agents produce activity; they never see the engine; agents run in a process group, confined by the kernel when asked (internal/sandbox); what agents print is redacted where it enters ralph; a prompt too long for an argument is cut to an excerpt"},
	"config":                      {[]string{"events", "hats", "criteria", "pricing", "internal/suggest", "internal/exitcode", "internal/redact"}, "the loader turns files into domain types (a pricing: section into prices); what config show prints of an env: value hides what looks secret, as ralph hides it everywhere (internal/redact)"},
	"pricing":                     {[]string{"events", "internal/suggest"}, "prices turn an iteration's token usage (events) into a cost; an unknown model's nearest known ones come from the did-you-mean helper"},
	"engine/memory":               {[]string{"internal/plural", "internal/ralphdir"}, "memories are files and text; a leaf but for a wording helper and the rules of .ralph/'s files"},
	"engine/checklist":            {nil, "a markdown checklist parser; a leaf"},
	"runfiles":                    {[]string{"events", "hats", "tasks", "internal/atomicfile", "internal/exitcode", "internal/fileholders", "internal/filewatch", "internal/hint", "internal/jsonkeys", "internal/ralphdir", "internal/redact", "internal/swapfile"}, "the files under .ralph/, the loop's and the autopilot's: their lines are events, a question without a hat goes back to the coordinator (hats), a run's end is an exit status, a refused lock names who really holds it, waiting for a run watches .ralph/ (internal/filewatch), its errors say what kind of failure they are, every file is opened with the rules of .ralph/ (internal/ralphdir) and the checkpoint is swapped in whole (internal/swapfile); the autopilot's log is folded with its lines' secrets hidden (internal/redact) and its keys' old spelling read (internal/jsonkeys), and a task's files are found by an id the trackers' rules allow (tasks); the temporary file a cut-off write left is known by its name (internal/atomicfile)"},
	"engine":                      {[]string{"events", "hats", "criteria", "pricing", "runfiles", "engine/memory", "engine/checklist", "internal/redact", "internal/plural", "internal/git", "internal/ralphdir", "internal/filewatch", "internal/hint"}, "the engine declares the interfaces it needs of backends; its errors say what kind of failure they are (internal/hint); configuration reaches it as Options; it writes its run's files through runfiles; it prices the iterations whose agent reports no cost (pricing); it redacts what it writes and reports; the raw output and the summary are opened with the rules of .ralph/ (internal/ralphdir)"},
	"engine/chain":                {[]string{"events", "runfiles", "internal/excerpt", "internal/exitcode", "internal/ralphdir"}, "a chain's plan, budget, state and handoff: it reads what each step's loop left in its directory (runfiles, events), writes its own state there, cuts what an agent handed off to a bound (internal/excerpt) and never reads it through a link (internal/ralphdir); its steps' loops run behind an interface the command line implements"},
	"view":                        {[]string{"engine", "engine/chain", "runfiles", "engine/memory", "events", "backends", "autopilot", "tasks", "pricing", "internal/exitcode", "internal/hint", "internal/plural", "internal/ralphdir", "internal/redact", "internal/filewatch"}, "views render what the engine reports (engine) and the autopilot's dry run plans (autopilot), what the loop's and the autopilot's files under .ralph/ hold (runfiles) (with the reader's secrets hidden), what backends diagnose and what models cost, and how to fix an error (internal/hint); they never see the commands; the agents' activity file is made as every file of .ralph/ (internal/ralphdir); a chain's state says which step's loop runs (engine/chain)"},
	"view/watch":                  {[]string{"view", "view/api", "runfiles", "hats", "internal/redact", "internal/filewatch"}, "`ralph watch` shows the view's model of a workspace read from files (view), the selected loop's place in its hats' graph (hats) as the API loads it from the run's config (view/api), and writes the same control requests as `ralph stop` and `ralph autopilot pause|resume|stop` (runfiles), hiding the reader's secrets"},
	"view/serve":                  {[]string{"view", "view/api", "runfiles", "events", "internal/hint", "internal/treewatch", "internal/ralphdir", "internal/redact"}, "`ralph serve` is an HTTP view over the API's model (view/api): its errors' statuses come from the kind of failure they say they are (internal/hint), its event stream filters a log's lines (events) as `ralph events` does (view), with the server's secrets hidden, and its streams share one kernel watcher (internal/treewatch); its token file is made as every file of .ralph/ (internal/ralphdir), beside the files runfiles names"},
	"view/api":                    {[]string{"view", "runfiles", "autopilot", "events", "hats", "config", "examples", "internal/flagvalue", "internal/git", "internal/hint", "internal/redact", "internal/treewatch", "internal/ralphdir"}, "what programs read of a workspace and ask of its run: the view's model of it (view), what an iteration changed as git diffs the trees its log recorded (internal/git), statuses, logs and control files of loops and autopilots (runfiles, events), how many of a tracker's tasks an autopilot has yet to start (autopilot), the hats' graph from a run's config as `ralph hats graph` loads it (config, hats, examples for -H presets), `ralph events`' filters (internal/flagvalue), the reader's secrets hidden and `ralph emit`'s redaction (internal/redact) and following a log with the kernel watcher its process shares (internal/treewatch); a log that is a link is refused with the rules of .ralph/ (internal/ralphdir)"},
	"view/mcp":                    {[]string{"view", "view/api", "internal/hint", "internal/redact"}, "`ralph mcp`'s tools are a thin view over what programs read of a workspace and ask of its run (view/api), in the MCP SDK's types, with the server's secrets hidden; a failure is printed as the command line prints it, with its hint (view, internal/hint)"},
	"autopilot":                   {[]string{"config", "criteria", "runfiles", "events", "tasks", "internal/git", "internal/exitcode", "internal/procgroup", "internal/ralphdir", "internal/redact", "internal/hint", "internal/filewatch", "internal/forge"}, "the coordinator runs loops through ralph's own binary, reads their files and writes its own through runfiles, out of the terminal's reach and interrupted through internal/procgroup, tasks come from trackers, merges go through git; what it writes and tells a tracker is redacted; its files under .ralph/ are never opened through a link (internal/ralphdir); its errors say what kind of failure they are (internal/hint); deliver: pr opens and follows pull requests through a forge's (internal/forge), which the command line builds"},
	"autopilot/cluster":           {[]string{"autopilot", "config", "criteria", "runfiles", "events", "internal/git", "internal/exitcode", "internal/procgroup", "internal/ralphdir", "tasks", "internal/redact", "internal/jsonkeys", "internal/linelog"}, "the wire between a coordinator and its workers over NATS JetStream: the coordinator is the autopilot's runner (autopilot); a worker checks a task's config as a local one (config) and adds the task's commands as criteria, keeps checkouts through git, runs `ralph loop` in a process group that dies with the worker, follows its event log (runfiles, events) and reports its exit code, its secrets hidden, in what it logs too (internal/linelog); task ids are the trackers'; the coordinator's copies under .ralph/ are never written through a link (internal/ralphdir); what an earlier ralph wrote is read with its keys' old spelling (internal/jsonkeys)"},
	"hooks":                       {[]string{"autopilot", "config", "engine", "runfiles", "events", "hats", "internal/exitcode", "internal/procgroup", "internal/shell", "internal/tail"}, "the user's lifecycle hooks: the engine and the autopilot run them through interfaces they declare (engine, autopilot), once per line of a log whose hook lines runfiles names, made from the hooks: section (config) and checked against the hats' topics (hats); commands run in a process group, with the shell internal/shell finds"},
	"internal/procgroup":          {nil, "starting, stopping and reaping a process group; a leaf helper"},
	"internal/shell":              {nil, "the sh that the user's commands run with, or why there is none; a leaf helper"},
	"internal/suggest":            {nil, "did-you-mean by edit distance; a leaf helper"},
	"internal/fileholders":        {nil, "which processes have a file open; a leaf helper"},
	"internal/redact":             {nil, "hiding secret values in text and streams; a leaf helper"},
	"internal/exitcode":           {nil, "the one table of exit statuses; a leaf"},
	"internal/hint":               {[]string{"internal/exitcode"}, "the one error-with-hint, its kinds and its printer; a leaf but for the exit statuses its errors default to"},
	"internal/git":                {[]string{"internal/treewatch", "internal/procgroup", "internal/fileholders", "internal/ralphdir"}, "a workspace's git repository, and its files where there is none, without ralph's own directory (its name, internal/ralphdir); it skips looking when the file watch says nothing changed; git runs in a process group of its own, out of the terminal's reach; an index.lock nothing holds open is stale"},
	"internal/jsonkeys":           {nil, "reading JSON with an earlier spelling of its keys; a leaf helper"},
	"internal/filewatch":          {[]string{"internal/hint"}, "when a file ralph reads may have changed, from the kernel's notifications, and the one place a kernel watcher is made; a leaf helper but for the error it says running out of them with"},
	"internal/treewatch":          {[]string{"internal/filewatch"}, "whether a directory tree changed, from the kernel's notifications; its kernel watchers come from the one place that makes them (internal/filewatch)"},
	"internal/swapfile":           {[]string{"internal/ralphdir", "internal/atomicfile"}, "atomic replacement of a small file without creating one; its spare is never written through a link; where no exchange exists it writes then renames (internal/atomicfile)"},
	"internal/ralphdir":           {[]string{"internal/atomicfile"}, "making and opening ralph's files under .ralph/ without following links, private to the user; a leaf helper but for the one atomic replacement (internal/atomicfile)"},
	"internal/atomicfile":         {nil, "replacing a file atomically on every system; a leaf helper"},
	"internal/sandbox":            {[]string{"internal/hint", "internal/exitcode"}, "confining an agent's process by the kernel (Landlock, bubblewrap, Seatbelt); a leaf helper but for the error with a hint and exit status that a mode this machine cannot give is"},
	"internal/gittest":            {nil, "real git repositories for tests; a leaf helper"},
	"internal/natstest":           {nil, "real NATS servers with JetStream for tests; a leaf helper"},
	"internal/flagvalue":          {nil, "command-line values that check their range as kong parses them; a leaf helper"},
	"internal/completion":         {nil, "the shell's completion of the command line, from kong's model (kongplete); a leaf helper"},
	"internal/interrupt":          {nil, "SIGINT and SIGTERM as cancellation, then force; a leaf helper"},
	"internal/linelog":            {nil, "log records as the lines people read, attributes on request, secrets hidden; a leaf helper"},
	"internal/plural":             {nil, "counts of things in words (1 hat, 2 hats); a leaf helper"},
	"internal/tail":               {nil, "the last bytes of a stream in bounded memory; a leaf helper"},
	"internal/excerpt":            {nil, "the beginning and end of a text too long to pass on whole; a leaf helper"},
	"internal/benchgen":           {nil, "deterministic synthetic event logs and backlogs for benchmarks; a leaf helper"},
	"internal/benchrun":           {[]string{"internal/benchgen", "runfiles", "events", "internal/sandbox"}, "the benchmark driver runs ralph as a process; it only generates logs and backlogs itself, finds the run's files where runfiles says, reads the autopilot's log as the autopilot folds it (runfiles, events), and times the sandboxes this machine has (internal/sandbox)"},
	"tasks":                       {[]string{"internal/procgroup", "internal/shell", "internal/atomicfile", "internal/forge", "internal/forge/github", "internal/forge/gitlab", "internal/forge/linear"}, "the task trackers run their own programs, each in a process group of its own, out of the terminal's reach, and read their own files (and replace them atomically); a command source's commands run with the shell internal/shell finds; a forge's issues are read and changed through its client (internal/forge/…)"},
	"internal/forge":              {[]string{"internal/hint"}, "what ralph asks of a forge, its tokens and its rate limits; a leaf helper but for the error with a hint a missing token is"},
	"internal/forge/github":       {[]string{"internal/forge", "internal/hint"}, "GitHub's issues and pull requests as internal/forge says them, and how to fix a refused token or assignment (internal/hint)"},
	"internal/forge/gitlab":       {[]string{"internal/forge", "internal/hint"}, "GitLab's issues and merge requests as internal/forge says them, and how to fix a refused token or project (internal/hint)"},
	"internal/forge/linear":       {[]string{"internal/forge", "internal/hint"}, "a Linear team's issues as internal/forge says them, through its GraphQL API, its errors with how to fix them"},
	"internal/forge/forgetest":    {[]string{"internal/forge"}, "an in-memory forge for tests"},
	"internal/fakeforge":          {nil, "what the fake forges share; a leaf helper"},
	"internal/fakeforge/linear":   {[]string{"internal/fakeforge"}, "the fake of Linear's GraphQL API logs its requests and refuses them for a rate limit as every fake does"},
	"internal/fakeforge/github":   {[]string{"internal/fakeforge", "internal/gittest"}, "a fake GitHub for tests: the request log shared by the fakes (internal/fakeforge), pull requests on a real bare repository (internal/gittest)"},
	"internal/scriptagent/script": {nil, "the scripted test agent's script format; a leaf"},
}

// importedBy lists, for a package whose importers are limited, the only
// packages that may import it, with the reason.
var importedBy = map[string]struct {
	by  []string
	why string
}{
	"runfiles": {[]string{"engine", "engine/chain", "view", "view/api", "view/serve", "view/watch", "autopilot", "autopilot/cluster", "hooks", "cmd/ralph", "internal/benchrun"},
		"one package owns .ralph/: the loop writes its run through it (engine) and the autopilot its own files (autopilot, autopilot/cluster), and what reads a run or an autopilot's files (views, autopilot, hooks, the command line, the benchmarks) reads through it; the packages the loop is made of (events, hats, criteria, backends, config, tasks) never see a run's files, and the helpers below the domain know only the directory's name (internal/ralphdir)"},
	"autopilot": {[]string{"autopilot/cluster", "hooks", "view", "view/api", "cmd/ralph"},
		"the autopilot is behaviour, not files: its runners (autopilot/cluster), the hooks it runs (hooks), its dry run's plan (view), the count of a tracker's tasks it has yet to start (view/api) and the command line; what its files say is read through runfiles, so the views that only show an autopilot never load its state machine"},
}

// execAllowed are the packages that may start processes. internal/ covers
// internal/procgroup, through which backends and criteria start theirs;
// tasks runs the trackers' CLIs, autopilot runs each task's `ralph loop`,
// hooks runs the user's hook commands.
var execAllowed = []string{"backends", "criteria", "internal/", "cmd/", "tasks", "autopilot", "hooks"}

// fsnotifyAllowed are the packages that make kernel watchers: one for
// ralph's files, and one for directory trees and the watcher `ralph serve`
// shares among its streams. Every hand-written loop over a kernel
// watcher's events had its own policy for a lost notification.
var fsnotifyAllowed = []string{"internal/filewatch", "internal/treewatch"}

func TestLayering(t *testing.T) {
	root := repoRoot(t)
	pkgs := packageImports(t, root)
	for pkg := range allowed {
		assert.Contains(t, pkgs, pkg, "a rule for %s, which has no non-test Go files", pkg)
	}
	for pkg, imports := range pkgs {
		rule, ok := allowed[pkg]
		if ok {
			for _, imp := range imports {
				if dep, isRalph := strings.CutPrefix(imp, module); isRalph {
					assert.Contains(t, rule.imports, dep, "%s imports %s, but %s (%s)", pkg, dep, pkg, rule.why)
				}
			}
		}
		for _, imp := range imports {
			if imp == "os/exec" && !hasAnyPrefix(pkg, execAllowed) {
				t.Errorf("%s imports os/exec; only backends, criteria, internal helpers and cmd start processes", pkg)
			}
			if imp == "github.com/fsnotify/fsnotify" && !slices.Contains(fsnotifyAllowed, pkg) {
				t.Errorf("%s imports fsnotify; a file of ralph's is watched through internal/filewatch, which says a lost notification as a change", pkg)
			}
		}
	}
}

// One function asks the kernel for a watcher (filewatch.Kernel), so that
// running out of them is said in one place, with what to raise.
func TestOneKernelWatcherConstructor(t *testing.T) {
	root := repoRoot(t)
	var sites []string
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return fs.SkipDir // the agents' npm trees, git's own
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(data), "fsnotify.NewWatcher(") {
			sites = append(sites, strings.TrimPrefix(path, root+string(filepath.Separator)))
		}
		return err
	}))
	assert.Equal(t, []string{filepath.Join("internal", "filewatch", "filewatch.go")}, sites)
}

// A package whose importers are limited is imported by those alone.
func TestImportedBy(t *testing.T) {
	pkgs := packageImports(t, repoRoot(t))
	for dep, rule := range importedBy {
		for pkg, imports := range pkgs {
			if slices.Contains(imports, module+dep) {
				assert.Contains(t, rule.by, pkg, "%s imports %s, which only %v may (%s)", pkg, dep, rule.by, rule.why)
			}
		}
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if s == strings.TrimSuffix(p, "/") || strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "go.mod not found")
		dir = parent
	}
}

// packageImports maps each package directory (relative to root) to the
// imports of its non-test files.
func packageImports(t *testing.T, root string) map[string][]string {
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if _, seen := out[pkg]; !seen {
			out[pkg] = nil // a package that imports nothing is a package too
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[pkg] = append(out[pkg], p)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// docs/architecture.md names every package and what it owns; a package
// added without a line there leaves a newcomer guessing.
func TestArchitectureDocListsEveryPackage(t *testing.T) {
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	require.NoError(t, err)
	for pkg := range packageImports(t, root) {
		if strings.HasPrefix(pkg, "internal/fakemodel/") || pkg == "." {
			continue // the fake model's command is part of internal/fakemodel
		}
		assert.True(t, strings.Contains(string(doc), "`"+pkg+"/`") || strings.Contains(string(doc), "`"+pkg+"`"),
			"docs/architecture.md does not list %s", pkg)
	}
}
