package criteria

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/ralph-loop/ralph/internal/plural"
)

// maxScan bounds how much of a file file_contains reads: enough for any
// source file or log an agent writes, without reading a disk image whole.
const maxScan = 32 << 20

// previewMax bounds the part of a file shown when a pattern is not found.
const previewMax = 1 << 10

func (c checker) fileExists() outcome {
	full, err := resolvePath(c.ws, c.spec.Path)
	if err != nil {
		return failed(err.Error() + "; " + escapeHint)
	}
	fi, err := os.Stat(full)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failed(fmt.Sprintf("%s does not exist in the workspace", c.spec.Path))
	case err != nil:
		return failed(fmt.Sprintf("stat %s: %v", c.spec.Path, err))
	case fi.IsDir():
		return passed(fmt.Sprintf("%s exists (a directory)", c.spec.Path))
	}
	return passed(fmt.Sprintf("%s exists (%s)", c.spec.Path, plural.Count(int(fi.Size()), "byte", "bytes")))
}

func (c checker) fileContains() outcome {
	full, err := resolvePath(c.ws, c.spec.Path)
	if err != nil {
		return failed(err.Error() + "; " + escapeHint)
	}
	data, truncated, err := readCapped(full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return failed(fmt.Sprintf("%s does not exist in the workspace", c.spec.Path))
		}
		return failed(fmt.Sprintf("read %s: %v", c.spec.Path, err))
	}
	at := c.find(data)
	if at < 0 {
		return failed(c.notFound(data, truncated))
	}
	line := bytes.Count(data[:at], []byte("\n")) + 1
	return passed(fmt.Sprintf("%s contains %s (line %d)", c.spec.Path, c.patternText(), line))
}

// find is the offset of the first match in data, or -1.
func (c checker) find(data []byte) int {
	if c.spec.Regex == "" {
		return bytes.Index(data, []byte(c.spec.Text))
	}
	// Validate has compiled it already; an error cannot happen here.
	re, err := compilePattern(c.spec.Regex)
	if err != nil {
		return -1
	}
	if loc := re.FindIndex(data); loc != nil {
		return loc[0]
	}
	return -1
}

// compilePattern compiles a file_contains regex. ^ and $ match at line
// boundaries, as they do in grep: people write regexes for files line by
// line.
func compilePattern(expr string) (*regexp.Regexp, error) {
	return regexp.Compile("(?m)" + expr)
}

func (c checker) patternText() string {
	if c.spec.Regex != "" {
		return fmt.Sprintf("a match for /%s/", c.spec.Regex)
	}
	return fmt.Sprintf("%q", c.spec.Text)
}

// notFound says the pattern is missing and shows how the file begins, so
// the agent sees what is there instead.
func (c checker) notFound(data []byte, truncated bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s does not contain %s", c.spec.Path, c.patternText())
	if truncated {
		fmt.Fprintf(&b, " in its first %d MiB", maxScan>>20)
	}
	if len(data) == 0 {
		b.WriteString("; the file is empty")
		return b.String()
	}
	preview := data
	if len(preview) > previewMax {
		preview = preview[:previewMax]
		if i := bytes.LastIndexByte(preview, '\n'); i > 0 {
			preview = preview[:i+1]
		}
	}
	fmt.Fprintf(&b, "; it begins:\n%s", preview)
	return b.String()
}

// readCapped reads up to maxScan bytes of a regular file and says whether
// there was more.
func readCapped(path string) ([]byte, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if fi.IsDir() {
		return nil, false, errors.New("is a directory, not a file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxScan+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > maxScan {
		return data[:maxScan], true, nil
	}
	return data, false, nil
}

// resolvePath turns a criterion's path into a real path inside the
// workspace: relative paths are joined to it, then symlinks are resolved
// as far as the path exists. Anything that ends up outside the workspace
// is refused, because criteria judge the agent's work, and a symlink or
// "../" would let a check (and so the agent) point at the rest of the
// machine.
func resolvePath(workspace, path string) (string, error) {
	absWS, err := filepath.Abs(workspace)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", workspace, err)
	}
	realWS, err := filepath.EvalSymlinks(absWS)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", workspace, err)
	}
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(absWS, full)
	}
	full = filepath.Clean(full)
	if !within(absWS, full) && !within(realWS, full) {
		return "", fmt.Errorf("path %q is outside the workspace %s", path, workspace)
	}
	real, err := resolveExisting(full)
	if err != nil {
		return "", fmt.Errorf("resolve path %q: %w", path, err)
	}
	if !within(realWS, real) {
		return "", fmt.Errorf("path %q leads through a symlink to %s, outside the workspace %s", path, real, workspace)
	}
	return real, nil
}

// resolveExisting evaluates the symlinks of the longest part of path that
// exists and appends the rest unchanged: a file that does not exist yet
// may still sit in a symlinked directory.
func resolveExisting(path string) (string, error) {
	var rest []string
	for {
		real, err := filepath.EvalSymlinks(path)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
		}
		parent := filepath.Dir(path)
		if parent == path {
			return filepath.Join(append([]string{path}, rest...)...), nil
		}
		rest = append([]string{filepath.Base(path)}, rest...)
		path = parent
	}
}

// within reports whether path is root or below it. Both must be clean and
// absolute.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
