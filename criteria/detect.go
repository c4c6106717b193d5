package criteria

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Detect fills in the command of a tests_pass or no_type_errors criterion
// that has none, from the files at the workspace root. Other specs, and
// workspaces where nothing is recognised, come back unchanged. Check calls
// it; callers use it to show which command a criterion will run, e.g.
// Detect(ws, spec).Label() is "tests_pass (go test ./...)".
//
// tests_pass, first match wins: go.mod → go test ./...; package.json with
// a scripts.test other than npm's placeholder → npm test; pyproject.toml,
// pytest.ini, setup.cfg, or a tests/ directory holding .py files → pytest;
// Cargo.toml → cargo test; a makefile with a test target → make test.
//
// no_type_errors: tsconfig.json → npx tsc --noEmit; go.mod → go vet ./...;
// mypy.ini, .mypy.ini, a [mypy] section in setup.cfg or [tool.mypy] in
// pyproject.toml → mypy .
func Detect(workspace string, spec Spec) Spec {
	if spec.Command != "" {
		return spec
	}
	switch spec.Type {
	case TypeTestsPass:
		spec.Command = detectTests(workspace)
	case TypeNoTypeErrors:
		spec.Command = detectTypeCheck(workspace)
	}
	return spec
}

// The messages for a workspace where Detect found nothing.
const (
	noTestsDetected = "no test command detected: looked for go.mod, package.json with a test script, " +
		"pyproject.toml, pytest.ini, setup.cfg or tests/*.py, Cargo.toml, and a Makefile with a test target; " +
		`set command on this criterion, e.g. command: "npm run test:unit"`
	noTypeCheckDetected = "no type checker detected: looked for tsconfig.json, go.mod, and mypy configuration " +
		"(mypy.ini, .mypy.ini, [mypy] in setup.cfg, [tool.mypy] in pyproject.toml); " +
		`set command on this criterion, e.g. command: "npx tsc --noEmit"`
)

func detectTests(ws string) string {
	switch {
	case isFile(ws, "go.mod"):
		return "go test ./..."
	case hasNpmTestScript(ws):
		return "npm test"
	case isPythonProject(ws):
		return "pytest"
	case isFile(ws, "Cargo.toml"):
		return "cargo test"
	case hasMakeTarget(ws, "test"):
		return "make test"
	}
	return ""
}

func detectTypeCheck(ws string) string {
	switch {
	case isFile(ws, "tsconfig.json"):
		return "npx tsc --noEmit"
	case isFile(ws, "go.mod"):
		return "go vet ./..."
	case hasMypyConfig(ws):
		return "mypy ."
	}
	return ""
}

func isFile(ws, name string) bool {
	fi, err := os.Stat(filepath.Join(ws, name))
	return err == nil && fi.Mode().IsRegular()
}

// npmPlaceholder is part of the test script `npm init` writes, which
// always fails: such a project has no tests to run.
const npmPlaceholder = "no test specified"

func hasNpmTestScript(ws string) bool {
	data, err := os.ReadFile(filepath.Join(ws, "package.json"))
	if err != nil {
		return false
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return false
	}
	script := strings.TrimSpace(pkg.Scripts["test"])
	return script != "" && !strings.Contains(script, npmPlaceholder)
}

func isPythonProject(ws string) bool {
	for _, name := range []string{"pyproject.toml", "pytest.ini", "setup.cfg"} {
		if isFile(ws, name) {
			return true
		}
	}
	matches, _ := filepath.Glob(filepath.Join(ws, "tests", "*.py"))
	return len(matches) > 0
}

// makeTarget matches a rule line naming target among its targets ("test:",
// "unit test::"), but not a variable assignment ("test := …").
func makeTarget(target string) *regexp.Regexp {
	name := `[^\s:#=]+`
	return regexp.MustCompile(`(?m)^(?:` + name + `[ \t]+)*` + regexp.QuoteMeta(target) +
		`(?:[ \t]+` + name + `)*[ \t]*::?(?:[^=]|$)`)
}

// hasMakeTarget looks in the makefile make itself would read: the first of
// GNUmakefile, makefile and Makefile.
func hasMakeTarget(ws, target string) bool {
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
		data, err := os.ReadFile(filepath.Join(ws, name))
		if err == nil {
			return makeTarget(target).Match(data)
		}
	}
	return false
}

func hasMypyConfig(ws string) bool {
	return isFile(ws, "mypy.ini") || isFile(ws, ".mypy.ini") ||
		hasSection(filepath.Join(ws, "setup.cfg"), "[mypy]", "[mypy-") ||
		hasSection(filepath.Join(ws, "pyproject.toml"), "[tool.mypy]", "[tool.mypy.", "[[tool.mypy.")
}

// hasSection reports whether an INI or TOML file has a section header
// starting with one of prefixes.
func hasSection(path string, prefixes ...string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		for _, p := range prefixes {
			if strings.HasPrefix(line, p) {
				return true
			}
		}
	}
	return false
}
