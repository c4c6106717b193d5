package config

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// objectiveHint is how to give ralph an objective, for every "no objective"
// problem.
const objectiveHint = "add event_loop.prompt, create PROMPT.md, or pass -p"

// Objective is the task the loop works on, and where it came from, for
// logs: "-p", the path of the file read, or "event_loop.prompt (ralph.yml:4)"
// ("task (ralph.json:2)" for a ralph.json).
//
// The first of these that is set wins: prompt (the -p flag), promptFile
// (the -P flag, relative to dir), event_loop.prompt, event_loop.prompt_file
// (default PROMPT.md). A relative prompt_file is looked for next to the
// config file that set it (or the last config file), then in dir.
func (c *Config) Objective(dir, prompt, promptFile string) (text, source string, err error) {
	switch {
	case prompt != "":
		return prompt, "-p", nil
	case promptFile != "":
		return readObjective(resolve(dir, promptFile), pos{}, "-P "+promptFile)
	case c.EventLoop.Prompt != "":
		return c.EventLoop.Prompt, cmp.Or(c.promptSource, "event_loop.prompt"), nil
	case c.EventLoop.PromptFile == "":
		return "", "", problemError(Problem{File: c.promptFileAt.file, Line: c.promptFileAt.line,
			Msg: "no objective: event_loop.prompt and event_loop.prompt_file are both empty", Hint: objectiveHint}, nil)
	}
	return c.promptFileObjective(dir)
}

// promptFileObjective reads event_loop.prompt_file from the first place it
// is found.
func (c *Config) promptFileObjective(dir string) (string, string, error) {
	pf := c.EventLoop.PromptFile
	var tried []string
	for _, base := range []string{c.promptDir, dir} {
		if base == "" {
			base = "."
		}
		path := resolve(base, pf)
		if containsPath(tried, path) {
			continue
		}
		tried = append(tried, path)
		if _, err := os.Stat(path); err == nil {
			return readObjective(path, c.promptFileAt, "event_loop.prompt_file")
		}
	}
	return "", "", problemError(Problem{File: c.promptFileAt.file, Line: c.promptFileAt.line,
		Msg:  "no objective: no event_loop.prompt, and no file at " + strings.Join(tried, " or "),
		Hint: objectiveHint}, fs.ErrNotExist)
}

// readObjective reads an objective file; what names it in messages.
func readObjective(path string, at pos, what string) (string, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		reason := pathReason(err)
		return "", "", problemError(Problem{File: at.file, Line: at.line,
			Msg: fmt.Sprintf("read objective %s: %s", path, reason), Hint: "check " + what + ", or " + objectiveHint}, err)
	}
	if strings.TrimSpace(string(data)) == "" {
		return "", "", problemError(Problem{File: at.file, Line: at.line,
			Msg: fmt.Sprintf("no objective: %s is empty", path), Hint: "write the task into " + path + ", or " + objectiveHint}, nil)
	}
	return string(data), path, nil
}

// resolve joins a relative path to base.
func resolve(base, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(base, path)
}

func containsPath(paths []string, p string) bool {
	for _, q := range paths {
		if filepath.Clean(q) == filepath.Clean(p) {
			return true
		}
	}
	return false
}
