package criteria

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		spec Spec
		want string // "" for valid
	}{
		{"file_exists", Spec{Type: TypeFileExists, Path: "hello.txt"}, ""},
		{"absolute path left to ValidateIn", Spec{Type: TypeFileExists, Path: "/etc/passwd"}, ""},
		{"file_contains text", Spec{Type: TypeFileContains, Path: "a", Text: "x"}, ""},
		{"contains_text regex", Spec{Type: TypeContainsText, Path: "a", Regex: "^x$"}, ""},
		{"command_succeeds", Spec{Type: TypeCommandSucceeds, Command: "true", ExitCode: intPtr(3)}, ""},
		{"tests_pass without command", Spec{Type: TypeTestsPass}, ""},
		{"baseline ignore", Spec{Type: TypeGitClean, Baseline: "ignore"}, ""},
		{"no type", Spec{}, "type is missing; set type to one of: command_succeeds, commit_made, contains_text, " +
			"file_contains, file_exists, git_clean, lint_clean, no_type_errors, tests_pass"},
		{"unknown type, near", Spec{Type: "file_exist", Path: "a"},
			`criterion "file_exist": unknown type "file_exist"; did you mean "file_exists"?`},
		{"unknown type, dash", Spec{Type: "tests-pass"},
			`criterion "tests-pass": unknown type "tests-pass"; did you mean "tests_pass"?`},
		{"unknown type, far", Spec{Type: "magic"},
			`criterion "magic": unknown type "magic"; the types are: command_succeeds, commit_made, contains_text, ` +
				"file_contains, file_exists, git_clean, lint_clean, no_type_errors, tests_pass"},
		{"path missing", Spec{Type: TypeFileExists},
			`criterion "file_exists": path is required; set path to a file relative to the workspace, e.g. path: hello.txt`},
		{"path climbs out", Spec{Type: TypeFileExists, Path: "../x"},
			`criterion "file_exists ../x": path "../x" is outside the workspace; ` +
				"criteria only look inside the workspace; use a path relative to its root"},
		{"path climbs out after a dir", Spec{Type: TypeFileContains, Path: "sub/../../x", Text: "y"},
			`criterion "file_contains sub/../../x \"y\"": path "sub/../../x" is outside the workspace; ` +
				"criteria only look inside the workspace; use a path relative to its root"},
		{"no text nor regex", Spec{Type: TypeFileContains, Path: "a"},
			`criterion "file_contains a": text or regex is required; ` +
				"set text to the string the file must contain, or regex to a pattern it must match"},
		{"text and regex", Spec{Type: TypeFileContains, Path: "a", Text: "x", Regex: "y"},
			`criterion "file_contains a /y/": both text and regex are set; keep one of them`},
		{"bad regex", Spec{Type: TypeFileContains, Path: "a", Regex: "("},
			`criterion "file_contains a /(/": regex "(": error parsing regexp: missing closing ): ` + "`(`" +
				"; write the pattern in Go's RE2 syntax (https://golang.org/s/re2syntax)"},
		{"command missing", Spec{Type: TypeCommandSucceeds},
			`criterion "command_succeeds": command is required; set command to a shell command that exits 0 when the criterion holds`},
		{"lint_clean without command", Spec{Type: TypeLintClean},
			`criterion "lint_clean": command is required; ralph cannot guess your linter: ` +
				`set command, e.g. "golangci-lint run" or "npx eslint ."`},
		{"bad baseline", Spec{Type: TypeGitClean, Baseline: "always"},
			`criterion "git_clean": baseline "always" is not supported; ` +
				`use "ignore" (a failure that predates the run does not block), or leave it out`},
		{"negative timeout", Spec{Type: TypeGitClean, Timeout: -time.Second},
			`criterion "git_clean": timeout -1s is negative; leave it out for the default (5m0s), or set a positive one`},
		{"exit code out of range", Spec{Type: TypeCommandSucceeds, Command: "x", ExitCode: intPtr(300)},
			`criterion "command_succeeds (x) exits 300": exit_code 300 is out of range; a process exits with 0 to 255`},
		{"named", Spec{Type: TypeFileExists, Name: "the greeting"},
			`criterion "the greeting": path is required; set path to a file relative to the workspace, e.g. path: hello.txt`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.spec)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
			var se *SpecError
			assert.True(t, errors.As(err, &se), "a *SpecError")
		})
	}
}

func TestValidateIn(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	writeFile(t, ws, "hello.txt", "hi")
	writeFile(t, outside, "secret.txt", "secret")
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "link-out")))

	cases := []struct {
		name string
		path string
		want string
	}{
		{"relative", "hello.txt", ""},
		{"absolute inside", filepath.Join(ws, "hello.txt"), ""},
		{"absolute outside", filepath.Join(outside, "secret.txt"), "is outside the workspace"},
		{"symlink outside", "link-out", "leads through a symlink to " + filepath.Join(realPath(t, outside), "secret.txt")},
	}
	t.Run("missing workspace", func(t *testing.T) {
		err := ValidateIn(filepath.Join(ws, "gone"), Spec{Type: TypeFileExists, Path: "a"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "workspace: stat ")
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateIn(ws, Spec{Type: TypeFileExists, Path: tc.path})
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "use a path relative to its root")
		})
	}
}

func TestTypesSorted(t *testing.T) {
	types := Types()
	assert.True(t, slices.IsSorted(types))
	assert.Len(t, types, 9)
	assert.Contains(t, types, TypeContainsText)
}

func TestLabel(t *testing.T) {
	cases := []struct {
		name string
		spec Spec
		want string
	}{
		{"name wins", Spec{Type: TypeFileExists, Path: "a", Name: "greeting"}, "greeting"},
		{"file_exists", Spec{Type: TypeFileExists, Path: "hello.txt"}, "file_exists hello.txt"},
		{"file_contains text", Spec{Type: TypeFileContains, Path: "a.txt", Text: "Hi"}, `file_contains a.txt "Hi"`},
		{"contains_text regex", Spec{Type: TypeContainsText, Path: "a.txt", Regex: "^Hi"}, "contains_text a.txt /^Hi/"},
		{"tests_pass with command", Spec{Type: TypeTestsPass, Command: "go test ./..."}, "tests_pass (go test ./...)"},
		{"tests_pass bare", Spec{Type: TypeTestsPass}, "tests_pass"},
		{"exit code", Spec{Type: TypeCommandSucceeds, Command: "exit 3", ExitCode: intPtr(3)}, "command_succeeds (exit 3) exits 3"},
		{"multi-line command", Spec{Type: TypeLintClean, Command: "a &&\n  b"}, "lint_clean (a && b)"},
		{"long command", Spec{Type: TypeCommandSucceeds, Command: "echo " + strings.Repeat("x", 100)},
			"command_succeeds (echo " + strings.Repeat("x", 54) + "…)"},
		{"git_clean", Spec{Type: TypeGitClean}, "git_clean"},
		{"no type", Spec{}, "criterion"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.spec.Label())
		})
	}
}

func TestFromName(t *testing.T) {
	cases := []struct {
		name    string
		want    Spec
		wantErr string
	}{
		{"tests_pass", Spec{Type: TypeTestsPass}, ""},
		{"lint_clean", Spec{Type: TypeLintClean}, ""},
		{"no_type_errors", Spec{Type: TypeNoTypeErrors}, ""},
		{"git_clean", Spec{Type: TypeGitClean}, ""},
		{" commit_made ", Spec{Type: TypeCommitMade}, ""},
		{"test_pass", Spec{}, `unknown criterion "test_pass"; did you mean "tests_pass"?`},
		{"file_exists", Spec{}, `criterion "file_exists" needs parameters, so it cannot be given by name alone; ` +
			"write it as a mapping, e.g. {type: file_exists, path: hello.txt}"},
		{"command_succeeds", Spec{}, `criterion "command_succeeds" needs parameters, so it cannot be given by name alone; ` +
			"write it as a mapping, e.g. {type: command_succeeds, command: make build}"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromName(tc.name)
			if tc.wantErr != "" {
				assert.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
