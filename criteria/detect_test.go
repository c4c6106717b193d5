package criteria

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const npmInitPackage = `{"name": "x", "scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}`

func TestDetect(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		spec  Spec
		want  string // the label of the detected spec
	}{
		{"go.mod", map[string]string{"go.mod": "module x\n"}, Spec{Type: TypeTestsPass}, "tests_pass (go test ./...)"},
		{"package.json with a test script", map[string]string{"package.json": `{"scripts": {"test": "vitest run"}}`},
			Spec{Type: TypeTestsPass}, "tests_pass (npm test)"},
		{"package.json with npm's placeholder", map[string]string{"package.json": npmInitPackage},
			Spec{Type: TypeTestsPass}, "tests_pass"},
		{"placeholder falls through to make", map[string]string{"package.json": npmInitPackage, "Makefile": "test:\n\tnode t.js\n"},
			Spec{Type: TypeTestsPass}, "tests_pass (make test)"},
		{"broken package.json", map[string]string{"package.json": `{"scripts": `}, Spec{Type: TypeTestsPass}, "tests_pass"},
		{"pyproject.toml", map[string]string{"pyproject.toml": "[project]\nname = \"x\"\n"},
			Spec{Type: TypeTestsPass}, "tests_pass (pytest)"},
		{"pytest.ini", map[string]string{"pytest.ini": "[pytest]\n"}, Spec{Type: TypeTestsPass}, "tests_pass (pytest)"},
		{"tests dir with python", map[string]string{"tests/test_x.py": "def test_x(): pass\n"},
			Spec{Type: TypeTestsPass}, "tests_pass (pytest)"},
		{"tests dir without python", map[string]string{"tests/README": "x"}, Spec{Type: TypeTestsPass}, "tests_pass"},
		{"Cargo.toml", map[string]string{"Cargo.toml": "[package]\n"}, Spec{Type: TypeTestsPass}, "tests_pass (cargo test)"},
		{"Makefile with a test target", map[string]string{"Makefile": "build:\n\tcc x.c\n\ntest: build\n\t./x\n"},
			Spec{Type: TypeTestsPass}, "tests_pass (make test)"},
		{"Makefile, test among targets", map[string]string{"Makefile": ".PHONY: test\nunit test: build\n\t./x\n"},
			Spec{Type: TypeTestsPass}, "tests_pass (make test)"},
		{"Makefile, test only a variable", map[string]string{"Makefile": "test := x\ntests:\n\t./x\n"},
			Spec{Type: TypeTestsPass}, "tests_pass"},
		{"GNUmakefile is read before Makefile", map[string]string{"GNUmakefile": "all:\n", "Makefile": "test:\n"},
			Spec{Type: TypeTestsPass}, "tests_pass"},
		{"go.mod before Makefile", map[string]string{"go.mod": "module x\n", "Makefile": "test:\n"},
			Spec{Type: TypeTestsPass}, "tests_pass (go test ./...)"},
		{"nothing", nil, Spec{Type: TypeTestsPass}, "tests_pass"},
		{"a given command wins", map[string]string{"go.mod": "module x\n"},
			Spec{Type: TypeTestsPass, Command: "make check"}, "tests_pass (make check)"},

		{"tsconfig.json", map[string]string{"tsconfig.json": "{}"}, Spec{Type: TypeNoTypeErrors},
			"no_type_errors (npx tsc --noEmit)"},
		{"tsconfig.json before go.mod", map[string]string{"tsconfig.json": "{}", "go.mod": "module x\n"},
			Spec{Type: TypeNoTypeErrors}, "no_type_errors (npx tsc --noEmit)"},
		{"go.mod vets", map[string]string{"go.mod": "module x\n"}, Spec{Type: TypeNoTypeErrors}, "no_type_errors (go vet ./...)"},
		{"mypy.ini", map[string]string{"mypy.ini": "[mypy]\n"}, Spec{Type: TypeNoTypeErrors}, "no_type_errors (mypy .)"},
		{"pyproject with tool.mypy", map[string]string{"pyproject.toml": "[project]\n\n[tool.mypy]\nstrict = true\n"},
			Spec{Type: TypeNoTypeErrors}, "no_type_errors (mypy .)"},
		{"setup.cfg with mypy", map[string]string{"setup.cfg": "[metadata]\n[mypy]\n"},
			Spec{Type: TypeNoTypeErrors}, "no_type_errors (mypy .)"},
		{"pyproject without mypy", map[string]string{"pyproject.toml": "[project]\n"},
			Spec{Type: TypeNoTypeErrors}, "no_type_errors"},

		{"other types are left alone", map[string]string{"go.mod": "module x\n"}, Spec{Type: TypeLintClean}, "lint_clean"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			for name, content := range tc.files {
				writeFile(t, ws, name, content)
			}
			assert.Equal(t, tc.want, Detect(ws, tc.spec).Label())
		})
	}
}

func TestCheckNothingDetected(t *testing.T) {
	cases := []struct {
		name     string
		typ      string
		evidence string
	}{
		{"tests_pass", TypeTestsPass, noTestsDetected},
		{"no_type_errors", TypeNoTypeErrors, noTypeCheckDetected},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(t.Context(), t.TempDir(), Spec{Type: tc.typ}, Env{})
			assert.False(t, r.Passed)
			assert.Equal(t, tc.evidence, r.Evidence)
			assert.Contains(t, r.Evidence, "set command on this criterion")
		})
	}
}

// goEnv keeps the toolchain offline and to this module alone.
func goEnv() []string {
	return []string{"GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=", "GOPROXY=off"}
}

// A tiny stdlib-only module: go test and go vet work offline.
func TestCheckDetectedGoModule(t *testing.T) {
	t.Parallel()
	const mod = "module example.com/tiny\n\ngo 1.21\n"
	const code = "package tiny\n\nfunc Add(a, b int) int { return a + b }\n"
	cases := []struct {
		name     string
		typ      string
		test     string
		pass     bool
		evidence string
	}{
		{"tests pass", TypeTestsPass, "package tiny\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n",
			true, "$ go test ./...\nok  \texample.com/tiny"},
		{"a test fails", TypeTestsPass, "package tiny\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 4 {\n\t\tt.Fatal(\"Add(1, 2) is not 4\")\n\t}\n}\n",
			false, "Add(1, 2) is not 4"},
		{"vet is clean", TypeNoTypeErrors, "package tiny\n", true, "$ go vet ./...\nexit status 0"},
		{"vet finds a bad format", TypeNoTypeErrors, "package tiny\n\nimport \"fmt\"\n\nfunc f() { fmt.Printf(\"%d\", \"x\") }\n",
			false, "fmt.Printf format %d has arg \"x\" of wrong type string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			writeFile(t, ws, "go.mod", mod)
			writeFile(t, ws, "tiny.go", code)
			writeFile(t, ws, "tiny_test.go", tc.test)
			r := Check(t.Context(), ws, Spec{Type: tc.typ}, Env{ExtraEnv: goEnv()})
			require.Equal(t, tc.pass, r.Passed, r.Evidence)
			assert.Contains(t, r.Evidence, tc.evidence)
			assert.Equal(t, tc.typ, r.Name, "the name is the spec as configured")
		})
	}
}
