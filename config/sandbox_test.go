package config_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/config"
)

// sandbox is what a config.Sandbox says, without where each key was set.
type sandbox struct {
	Mode     string
	Write    []string
	DenyRead []string
	Network  string
}

func plain(s config.Sandbox) sandbox {
	return sandbox{Mode: s.Mode, Write: s.Write, DenyRead: s.DenyRead, Network: s.Network}
}

// sources says where each key of s was set, "" for a default.
func sources(s config.Sandbox) [4]string {
	return [4]string{s.Source("mode"), s.Source("write"), s.Source("deny_read"), s.Source("network")}
}

func TestSandboxDecodesEverySection(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	c, err := config.LoadBytes("ralph.yml", []byte(`sandbox:
  mode: landlock
  write: [/var/cache/build, ~/.cache/go-build]
  deny_read:
    - ~/.kube
  network: deny
hats:
  builder:
    triggers: [build.start]
    sandbox:
      network: allow
  reviewer:
    triggers: [build.done]
autopilot:
  sandbox:
    mode: bwrap
    write: /srv/shared
`))
	require.NoError(t, err)
	assert.Equal(t, sandbox{Mode: "landlock", Write: []string{"/var/cache/build", "/home/u/.cache/go-build"},
		DenyRead: []string{"/home/u/.kube"}, Network: "deny"}, plain(c.Sandbox))
	assert.Equal(t, [4]string{"sandbox.mode (ralph.yml:2)", "sandbox.write (ralph.yml:3)",
		"sandbox.deny_read (ralph.yml:5)", "sandbox.network (ralph.yml:6)"}, sources(c.Sandbox))

	require.NotNil(t, c.Hats[0].Sandbox)
	assert.Equal(t, sandbox{Network: "allow"}, plain(*c.Hats[0].Sandbox))
	assert.Nil(t, c.Hats[1].Sandbox, "a hat without sandbox: has none of its own")
	assert.Equal(t, sandbox{Mode: "bwrap", Write: []string{"/srv/shared"}}, plain(c.Autopilot.Sandbox),
		"a single path is a list of one")
	assert.Equal(t, "autopilot.sandbox.write (ralph.yml:17)", c.Autopilot.Sandbox.Source("write"))
}

// What no section sets takes its default: off for ralph loop, which a
// person watches, auto for the autopilot's slots, which nobody does.
func TestSandboxDefaults(t *testing.T) {
	c, err := config.LoadBytes("ralph.yml", []byte("hats:\n  builder: {triggers: [build.start]}\n"))
	require.NoError(t, err)
	assert.False(t, c.Sandbox.Configured())
	assert.Equal(t, sandbox{Mode: "off", Network: "allow"}, plain(c.LoopSandbox()))
	assert.Equal(t, sandbox{Mode: "auto", Network: "allow"}, plain(c.SlotSandbox()))
	assert.Equal(t, sandbox{Mode: "off", Network: "allow"}, plain(c.HatSandbox(c.Hats[0])))
	assert.Equal(t, [4]string{}, sources(c.SlotSandbox()), "a default was set nowhere")
	assert.Equal(t, config.Sandbox{}, config.Default().Sandbox)
}

// A section lays the keys it sets over the one below it; a list it sets
// replaces the one below, even when empty.
func TestSandboxLayers(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	tests := []struct {
		name  string
		data  string
		loop  sandbox // LoopSandbox
		slot  sandbox // SlotSandbox
		hat   sandbox // the first hat's, under ralph loop
		where string  // where the loop's mode was set
	}{
		{
			name:  "a hat that denies the network keeps the loop's mode and paths",
			data:  "sandbox: {mode: landlock, write: [/w], deny_read: [/d]}\nhats:\n  a: {triggers: [x], sandbox: {network: deny}}\n",
			loop:  sandbox{Mode: "landlock", Write: []string{"/w"}, DenyRead: []string{"/d"}, Network: "allow"},
			slot:  sandbox{Mode: "landlock", Write: []string{"/w"}, DenyRead: []string{"/d"}, Network: "allow"},
			hat:   sandbox{Mode: "landlock", Write: []string{"/w"}, DenyRead: []string{"/d"}, Network: "deny"},
			where: "sandbox.mode (ralph.yml:1)",
		},
		{
			name:  "a hat's empty list replaces the loop's",
			data:  "sandbox: {mode: auto, write: [/w]}\nhats:\n  a: {triggers: [x], sandbox: {write: []}}\n",
			loop:  sandbox{Mode: "auto", Write: []string{"/w"}, Network: "allow"},
			slot:  sandbox{Mode: "auto", Write: []string{"/w"}, Network: "allow"},
			hat:   sandbox{Mode: "auto", Write: []string{}, Network: "allow"},
			where: "sandbox.mode (ralph.yml:1)",
		},
		{
			name:  "a hat may turn the sandbox off",
			data:  "sandbox: {mode: bwrap}\nhats:\n  a: {triggers: [x], sandbox: {mode: \"off\"}}\n",
			loop:  sandbox{Mode: "bwrap", Network: "allow"},
			slot:  sandbox{Mode: "bwrap", Network: "allow"},
			hat:   sandbox{Mode: "off", Network: "allow"},
			where: "sandbox.mode (ralph.yml:1)",
		},
		{
			name: "the slots' mode is auto when only paths are set",
			data: "sandbox: {write: [~/cache]}\nautopilot:\n  sandbox: {network: deny}\nhats:\n  a: {triggers: [x]}\n",
			loop: sandbox{Mode: "off", Write: []string{"/home/u/cache"}, Network: "allow"},
			slot: sandbox{Mode: "auto", Write: []string{"/home/u/cache"}, Network: "deny"},
			hat:  sandbox{Mode: "off", Write: []string{"/home/u/cache"}, Network: "allow"},
		},
		{
			name:  "a top-level mode holds for the slots too",
			data:  "sandbox: {mode: \"off\"}\nhats:\n  a: {triggers: [x]}\n",
			loop:  sandbox{Mode: "off", Network: "allow"},
			slot:  sandbox{Mode: "off", Network: "allow"},
			hat:   sandbox{Mode: "off", Network: "allow"},
			where: "sandbox.mode (ralph.yml:1)",
		},
		{
			name:  "autopilot.sandbox is laid over the top level for the slots only",
			data:  "sandbox: {mode: landlock, deny_read: [/d]}\nautopilot:\n  sandbox: {mode: bwrap, deny_read: [/e, /f]}\nhats:\n  a: {triggers: [x]}\n",
			loop:  sandbox{Mode: "landlock", DenyRead: []string{"/d"}, Network: "allow"},
			slot:  sandbox{Mode: "bwrap", DenyRead: []string{"/e", "/f"}, Network: "allow"},
			hat:   sandbox{Mode: "landlock", DenyRead: []string{"/d"}, Network: "allow"},
			where: "sandbox.mode (ralph.yml:1)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.LoadBytes("ralph.yml", []byte(tt.data))
			require.NoError(t, err)
			assert.Equal(t, tt.loop, plain(c.LoopSandbox()), "ralph loop")
			assert.Equal(t, tt.slot, plain(c.SlotSandbox()), "a slot")
			assert.Equal(t, tt.hat, plain(c.HatSandbox(c.Hats[0])), "the hat")
			assert.Equal(t, tt.where, c.LoopSandbox().Source("mode"))
		})
	}
}

// A hat's section is laid over the slots' sandbox as over the loop's, and
// says where what it set came from.
func TestSandboxForHatOverSlot(t *testing.T) {
	c, err := config.LoadBytes("ralph.yml", []byte(
		"autopilot:\n  sandbox: {write: [/w]}\nhats:\n  a:\n    triggers: [x]\n    sandbox:\n      network: deny\n"))
	require.NoError(t, err)
	s := c.SlotSandbox().ForHat(c.Hats[0])
	assert.Equal(t, sandbox{Mode: "auto", Write: []string{"/w"}, Network: "deny"}, plain(s))
	assert.Equal(t, [4]string{"", "autopilot.sandbox.write (ralph.yml:2)", "", "hats.a.sandbox.network (ralph.yml:7)"}, sources(s))
}

// Files merge before sections are laid over each other: a later file's
// key replaces the earlier one's, its siblings stay, and a hat's section
// merges key by key across files.
func TestSandboxFileLayers(t *testing.T) {
	dir := t.TempDir()
	base := writeFile(t, dir, "ralph.yml", `sandbox:
  mode: landlock
  write: [/a, /b]
  deny_read: [/secret]
hats:
  builder:
    triggers: [build.start]
    sandbox: {network: deny, write: [/hat]}
`)
	over := writeFile(t, dir, "local.yml", `sandbox:
  write: [/c]
hats:
  builder:
    sandbox: {mode: bwrap}
autopilot:
  sandbox: {mode: landlock}
`)
	c, err := config.Load(base, over)
	require.NoError(t, err)
	assert.Equal(t, sandbox{Mode: "landlock", Write: []string{"/c"}, DenyRead: []string{"/secret"}, Network: "allow"}, plain(c.LoopSandbox()))
	assert.Equal(t, [4]string{"sandbox.mode (" + base + ":2)", "sandbox.write (" + over + ":2)", "sandbox.deny_read (" + base + ":4)", ""},
		sources(c.LoopSandbox()))
	assert.Equal(t, sandbox{Mode: "bwrap", Write: []string{"/hat"}, DenyRead: []string{"/secret"}, Network: "deny"}, plain(c.HatSandbox(c.Hats[0])))
	assert.Equal(t, "autopilot.sandbox.mode ("+over+":7)", c.SlotSandbox().Source("mode"))
}

// ~ is the home directory, a relative path is relative to the directory
// of the file that wrote it, and every path is clean.
func TestSandboxPaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := t.TempDir()
	base := writeFile(t, filepath.Join(dir, "project"), "ralph.yml", `sandbox:
  write: ["~", ~/x/../y/, cache, ../shared, /abs//path/, ./sub/.]
`)
	over := writeFile(t, filepath.Join(dir, "elsewhere"), "local.yml", `hats:
  builder:
    triggers: [build.start]
    sandbox:
      deny_read: [notes.txt]
`)
	t.Chdir(t.TempDir()) // what matters is the files' directories, not ralph's
	c, err := config.Load(base, over)
	require.NoError(t, err)
	assert.Equal(t, []string{home, filepath.Join(home, "y"), filepath.Join(dir, "project", "cache"),
		filepath.Join(dir, "shared"), "/abs/path", filepath.Join(dir, "project", "sub")}, c.Sandbox.Write)
	assert.Equal(t, []string{filepath.Join(dir, "elsewhere", "notes.txt")}, c.Hats[0].Sandbox.DenyRead)

	// Content that is not on disk has no directory: a relative path is
	// left relative, cleaned, as its commands are.
	c, err = config.LoadBytes("task.yml", []byte("sandbox:\n  write: [./a/../b, ~/c]\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"b", filepath.Join(home, "c")}, c.Sandbox.Write)
}

func TestSandboxProblems(t *testing.T) {
	modes := "use one of: off, auto, landlock, bwrap, seatbelt; auto picks the strongest sandbox this machine has; off runs the agent unconfined"
	runProblemCases(t, []problemCase{
		{
			name: "an unknown key near a known one",
			data: "sandbox:\n  mode: auto\n  denyread: [/x]\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  `unknown key "denyread" in sandbox; did you mean "deny_read"?`,
				Hint: `rename it to "deny_read", or remove it`},
		},
		{
			name: "an unknown key in a hat's sandbox, far from every known one",
			data: "hats:\n  a:\n    triggers: [x]\n    sandbox:\n      allow_net: true\n",
			want: config.Problem{File: "ralph.yml", Line: 5,
				Msg:  `unknown key "allow_net" in hats.a.sandbox`,
				Hint: "remove it, or use one of: mode, write, deny_read, network"},
		},
		{
			name: "an unknown key in autopilot.sandbox",
			data: "autopilot:\n  sandbox:\n    writes: [/x]\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  `unknown key "writes" in autopilot.sandbox; did you mean "write"?`,
				Hint: `rename it to "write", or remove it`},
		},
		{
			name: "a misspelt mode",
			data: "sandbox:\n  mode: landlok\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg: `sandbox.mode: unknown value "landlok"; did you mean "landlock"?`, Hint: modes},
		},
		{
			name: "a mode that is none",
			data: "autopilot:\n  sandbox: {mode: docker}\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg: `autopilot.sandbox.mode: unknown value "docker"`, Hint: modes},
		},
		{
			name: "a misspelt network",
			data: "hats:\n  a:\n    triggers: [x]\n    sandbox: {network: alow}\n",
			want: config.Problem{File: "ralph.yml", Line: 4,
				Msg:  `hats.a.sandbox.network: unknown value "alow"; did you mean "allow"?`,
				Hint: "use one of: allow, deny; deny leaves the agent only loopback"},
		},
		{
			name: "a mode that is not a string",
			data: "sandbox:\n  mode: [auto]\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  "sandbox.mode: expected a string, got a list",
				Hint: "write it on one line after the colon, quoted if it has special characters"},
		},
		{
			name: "an empty path",
			data: "sandbox:\n  write:\n    - /ok\n    - \"\"\n",
			want: config.Problem{File: "ralph.yml", Line: 4,
				Msg: "sandbox.write[1] is empty", Hint: "write an extra path the agent may write, e.g. ~/.cache/go-build, or remove the item"},
		},
		{
			name: "a bare ~, which YAML reads as nothing",
			data: "sandbox:\n  deny_read:\n    - ~\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg: "sandbox.deny_read[0] is empty", Hint: "write a path no agent may read, e.g. ~/.kube; quote a lone ~ ('~') to mean the home directory"},
		},
		{
			name: "another user's home",
			data: "sandbox:\n  write: [~bob/cache]\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  `sandbox.write[0]: "~bob/cache": ralph expands ~ and ~/… only, not another user's ~name`,
				Hint: "write the path in full, or set HOME"},
		},
		{
			name: "a mapping of paths",
			data: "sandbox:\n  write: {cache: /x}\n",
			want: config.Problem{File: "ralph.yml", Line: 2,
				Msg:  "sandbox.write: expected a list of paths, got a mapping",
				Hint: "write a list of paths, e.g. write: [~/.cache/go-build]"},
		},
		{
			name: "a list item that is a list",
			data: "sandbox:\n  deny_read:\n    - [/x]\n",
			want: config.Problem{File: "ralph.yml", Line: 3,
				Msg:  "sandbox.deny_read[0]: expected a path, got a list",
				Hint: "write each path as a string on its own `- ` line"},
		},
		{
			name: "a section that is not a mapping",
			data: "sandbox: auto\n",
			want: config.Problem{File: "ralph.yml", Line: 1,
				Msg:  `sandbox: expected a mapping, got "auto"`,
				Hint: "write the keys of sandbox indented below it, one per line"},
		},
	})
}

func TestSandboxPathNeedsHome(t *testing.T) {
	t.Setenv("HOME", "")
	runProblemCases(t, []problemCase{{
		name: "~ without a home directory",
		data: "sandbox:\n  write: [~/cache]\n",
		want: config.Problem{File: "ralph.yml", Line: 2,
			Msg:  `sandbox.write[0]: "~/cache": cannot expand ~: $HOME is not defined`,
			Hint: "write the path in full, or set HOME"},
	}})
}

// Every problem of every section is reported at once, in line order.
func TestSandboxProblemsAllAtOnce(t *testing.T) {
	_, err := config.LoadBytes("ralph.yml", []byte(`sandbox:
  mode: of
  write: [""]
hats:
  a:
    triggers: [x]
    sandbox: {network: open}
autopilot:
  sandbox: {mod: auto}
`))
	var cerr *config.Error
	require.ErrorAs(t, err, &cerr)
	var got []string
	for _, p := range cerr.Problems {
		got = append(got, p.Where()+": "+p.Msg)
	}
	assert.Equal(t, []string{
		`ralph.yml:2: sandbox.mode: unknown value "of"; did you mean "off"?`,
		`ralph.yml:3: sandbox.write[0] is empty`,
		`ralph.yml:7: hats.a.sandbox.network: unknown value "open"`,
		`ralph.yml:9: unknown key "mod" in autopilot.sandbox; did you mean "mode"?`,
	}, got)
}

// sandboxLayers is a config as a coordinator would send it, with a
// sandbox: in every place one can be, one of them brought in by a merge
// key and one in a JSON file.
var sandboxLayers = []config.Layer{{Name: "ralph.yml", Data: []byte(`# the team's config
_loose: &loose
  sandbox: {mode: "off", write: [/]}
sandbox:
  mode: "off"
  write: [/]
cli:
  backend: claude
event_loop:
  max_iterations: 7
hats:
  builder:
    triggers: [build.start]
    <<: *loose
  reviewer:
    triggers: [build.done]
    instructions: Review it.
autopilot:
  parallel: 2
  sandbox: {network: allow, deny_read: []}
`)}, {Name: "override.json", Data: []byte(`{"hats": {"reviewer": {"sandbox": {"mode": "off"}}}, "event_loop": {"max_iterations": 5}}`)},
	{Name: "plain.yml", Data: []byte("# nothing of the sandbox here\nmemories: {budget: 100}\n")}}

// A task's config cannot turn the worker's sandbox off or widen it: every
// sandbox: section is taken out, and only those, whether or not the
// worker trusts task commands.
func TestWithoutSandbox(t *testing.T) {
	before, err := config.LoadLayers(sandboxLayers...)
	require.NoError(t, err)
	require.Equal(t, "off", before.SlotSandbox().Mode)

	out, dropped, err := config.WithoutSandbox(sandboxLayers...)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"sandbox (ralph.yml:4)",
		"hats.builder.sandbox (ralph.yml:3)",
		"autopilot.sandbox (ralph.yml:20)",
		"hats.reviewer.sandbox (override.json:1)",
	}, dropped)
	require.Len(t, out, 3)
	assert.Equal(t, "override.yml", out[1].Name, "a JSON file written again as YAML is named so")
	assert.Equal(t, sandboxLayers[2], out[2], "a file without sandbox: is passed on as it came")
	assert.NotContains(t, string(out[0].Data), "sandbox", "nor in an anchor")

	after, err := config.LoadLayers(out...)
	require.NoError(t, err)
	assert.False(t, after.Sandbox.Configured())
	assert.False(t, after.Autopilot.Sandbox.Configured())
	for _, h := range after.Hats {
		assert.Nil(t, h.Sandbox, h.ID)
	}
	assert.Equal(t, sandbox{Mode: "auto", Network: "allow"}, plain(after.SlotSandbox()))

	// Everything else stays as it was.
	assert.Equal(t, 5, after.EventLoop.MaxIterations)
	assert.Equal(t, 2, after.Autopilot.Parallel)
	assert.Equal(t, 100, after.Memories.Budget)
	assert.Equal(t, before.CLI, after.CLI)
	require.Len(t, after.Hats, 2)
	assert.Equal(t, before.Hats[1].Instructions, after.Hats[1].Instructions)
	assert.Equal(t, before.Hats[0].Triggers, after.Hats[0].Triggers)

	// The worker's own config, laid over, is what confines its loops.
	own := config.Layer{Name: "worker.yml", Data: []byte("autopilot:\n  sandbox: {network: deny}\n")}
	withOwn, err := config.LoadLayers(append(out, own)...)
	require.NoError(t, err)
	assert.Equal(t, sandbox{Mode: "auto", Network: "deny"}, plain(withOwn.SlotSandbox()))
}

func TestWithoutSandboxRefusesAnInvalidConfig(t *testing.T) {
	_, _, err := config.WithoutSandbox(config.Layer{Name: "task.yml", Data: []byte("sandbox:\n  mode: none\n")})
	var cerr *config.Error
	require.ErrorAs(t, err, &cerr)
	assert.Contains(t, err.Error(), `task.yml:2: sandbox.mode: unknown value "none"`)
}

// WithoutCommands, the untrusting worker's filter, keeps no sandbox:
// either, at the top level, in a hat or under autopilot:.
func TestWithoutCommandsDropsSandbox(t *testing.T) {
	data, _, err := config.WithoutCommands(sandboxLayers...)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "sandbox")
	c, err := config.LoadBytes("task.yml", data)
	require.NoError(t, err)
	assert.False(t, c.Sandbox.Configured())
	for _, h := range c.Hats {
		assert.Nil(t, h.Sandbox, h.ID)
	}
	assert.Equal(t, "auto", c.SlotSandbox().Mode)
}

func TestSandboxSourcePanicsOnAnUnknownKey(t *testing.T) {
	assert.PanicsWithValue(t, `config: Sandbox.Source of unknown key "mod"; use one of mode, write, deny_read, network`,
		func() { config.Sandbox{}.Source("mod") })
}
