package backends

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// whyNotFound looks closer at a binary exec.LookPath did not accept, so the
// error says what is actually wrong and how to fix it. Empty results mean
// it really is not there, and the backend's install hint applies.
//
// splitArgs says whether the backend takes cli.args after the program (the
// command backend does; the agent CLIs put their own arguments first, so
// "npx claude" cannot be split for them).
func whyNotFound(bin string, splitArgs bool) (reason, fix string) {
	if strings.ContainsRune(bin, os.PathSeparator) {
		if reason, fix := pathProblem(bin); reason != "" {
			return reason, fix
		}
	} else if reason, fix := notOnPath(bin); reason != "" {
		return reason, fix
	}
	if splitArgs {
		return splitCommand(bin)
	}
	return "", ""
}

// pathProblem explains why a path that exists cannot be run.
func pathProblem(bin string) (reason, fix string) {
	fi, err := os.Stat(bin)
	switch {
	case err != nil:
		return "", ""
	case fi.IsDir():
		return "is a directory, not a program", "point cli.command at the program inside it"
	case fi.Mode().Perm()&0o111 == 0:
		return "exists but is not executable", "make it executable: chmod +x " + shellQuote(bin)
	}
	return "", ""
}

// notOnPath explains a bare name that is a file in the current folder:
// like a shell, ralph looks only on PATH for a name without a slash.
func notOnPath(bin string) (reason, fix string) {
	fi, err := os.Stat(bin)
	if err != nil || fi.IsDir() {
		return "", ""
	}
	local := "." + string(os.PathSeparator) + bin
	fix = fmt.Sprintf("a name without a slash is looked up on PATH only; to run the file here, set cli.command to %s", local)
	if fi.Mode().Perm()&0o111 == 0 {
		fix += " and make it executable: chmod +x " + shellQuote(local)
	}
	return "is not on PATH", fix
}

// splitCommand suggests cli.args when the command is a program followed by
// its arguments, as in "sh ./agent.sh": cli.command names one program, and
// no shell splits it.
func splitCommand(bin string) (reason, fix string) {
	words := strings.Fields(bin)
	if len(words) < 2 {
		return "", ""
	}
	if _, err := exec.LookPath(words[0]); err != nil {
		return "", ""
	}
	args := make([]string, len(words)-1)
	for i, w := range words[1:] {
		args[i] = strconv.Quote(w)
	}
	return "is not a program: cli.command names one program, and its arguments go in cli.args",
		fmt.Sprintf("set command: %s and args: [%s]", words[0], strings.Join(args, ", "))
}

// shellQuote quotes path for a shell command the user can paste, when it
// needs quoting.
func shellQuote(path string) string {
	if strings.ContainsFunc(path, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+", r))
	}) {
		return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
	}
	return path
}

// missingInterpreter explains a program that exists yet could not be
// started for "no such file": the kernel says so when the interpreter on a
// script's #! line is missing.
func missingInterpreter(path string) (reason, fix string) {
	f, err := os.Open(path)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := f.Read(head)
	line, _, _ := strings.Cut(string(head[:n]), "\n")
	if !strings.HasPrefix(line, "#!") {
		return "", ""
	}
	line = strings.TrimSpace(line)
	return fmt.Sprintf("exists, but its interpreter (%s) was not found", line),
		"fix the script's first line, e.g. #!/bin/sh or #!/usr/bin/env bash"
}
