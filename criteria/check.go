package criteria

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Check runs one criterion in workspace and says whether it holds, with
// evidence. It never returns an error: a criterion that cannot be checked
// (misconfigured, path outside the workspace, no test command detected,
// not a repository) fails, and its evidence says why and what to set. The
// check is bounded by spec.Timeout (DefaultTimeout when zero); a command
// still running then is stopped with its whole process group. When ctx
// ends first the check stops the same way and the Result is Interrupted.
func Check(ctx context.Context, workspace string, spec Spec, env Env) Result {
	start := time.Now()
	o := check(ctx, workspace, spec, env)
	return Result{
		Spec:        spec,
		Name:        spec.Label(),
		Passed:      o.passed,
		Evidence:    o.evidence,
		Duration:    time.Since(start),
		Interrupted: !o.passed && ctx.Err() != nil,
	}
}

// CheckAll checks specs one after another, in order: they share the
// workspace, and one may depend on what another's command leaves (a build
// before its tests). Once ctx ends, the remaining criteria are not run;
// their Results are Interrupted. There is one Result per spec, in order.
func CheckAll(ctx context.Context, workspace string, specs []Spec, env Env) []Result {
	out := make([]Result, 0, len(specs))
	for _, s := range specs {
		out = append(out, Check(ctx, workspace, s, env))
	}
	return out
}

// outcome is what a check found.
type outcome struct {
	passed   bool
	evidence string
}

func passed(evidence string) outcome { return outcome{passed: true, evidence: evidence} }
func failed(evidence string) outcome { return outcome{evidence: evidence} }

// checker is one criterion about to be checked in one workspace.
type checker struct {
	ws   string
	spec Spec // with its command detected
	env  Env
}

// timeoutError is the cause of a check's context when its own time limit
// ends it, to tell that apart from the caller's cancellation.
type timeoutError struct{ limit time.Duration }

func (e *timeoutError) Error() string { return fmt.Sprintf("the check timed out after %s", e.limit) }

func check(ctx context.Context, workspace string, spec Spec, env Env) outcome {
	if ctx.Err() != nil {
		return failed(fmt.Sprintf("not checked: interrupted (%v)", context.Cause(ctx)))
	}
	if err := Validate(spec); err != nil {
		return failed(err.Error())
	}
	if workspace == "" {
		workspace = "."
	}
	if err := checkWorkspace(workspace); err != nil {
		return failed(err.Error())
	}
	ctx, cancel := context.WithTimeoutCause(ctx, spec.timeout(), &timeoutError{spec.timeout()})
	defer cancel()
	return checker{ws: workspace, spec: Detect(workspace, spec), env: env}.run(ctx)
}

// checkWorkspace names a missing workspace; otherwise every check would
// fail with its own confusing variant of "no such file".
func checkWorkspace(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("workspace %s: not a directory", dir)
	}
	return nil
}

func (c checker) run(ctx context.Context) outcome {
	switch c.spec.Type {
	case TypeFileExists:
		return c.fileExists()
	case TypeFileContains, TypeContainsText:
		return c.fileContains()
	case TypeCommandSucceeds, TypeLintClean:
		return c.command(ctx)
	case TypeTestsPass:
		return c.detectedCommand(ctx, noTestsDetected)
	case TypeNoTypeErrors:
		return c.detectedCommand(ctx, noTypeCheckDetected)
	case TypeGitClean:
		return c.gitClean(ctx)
	case TypeCommitMade:
		return c.commitMade(ctx)
	}
	// Validate admits only the types above.
	return failed(fmt.Sprintf("unknown type %q", c.spec.Type))
}

func (c checker) detectedCommand(ctx context.Context, none string) outcome {
	if c.spec.Command == "" {
		return failed(none)
	}
	return c.command(ctx)
}

// command runs the criterion's command and compares its exit status with
// the expected one. The evidence reads like a terminal: the command, the
// tail of its output, how it ended.
func (c checker) command(ctx context.Context) outcome {
	res := runCommand(ctx, "criterion "+c.spec.Label(), c.ws, c.spec.Command, c.env.ExtraEnv, c.env.Sandbox)
	want := c.spec.expectedExit()
	ok := res.startErr == nil && !res.stopped && res.signal == 0 && res.exitCode == want
	var b strings.Builder
	b.WriteString("$ " + c.spec.Command + "\n")
	b.WriteString(res.output)
	if res.output != "" && !strings.HasSuffix(res.output, "\n") {
		b.WriteString("\n")
	}
	b.WriteString(howItEnded(ctx, res, want))
	if why := c.refusal(ok, res.output); why != "" {
		b.WriteString("\n" + why)
	}
	if res.leftover != nil {
		b.WriteString("\n" + res.leftover.Error())
	}
	return outcome{passed: ok, evidence: b.String()}
}

// refusal says, of a confined command that failed, what its sandbox
// refused it, which its own output rarely puts that way.
func (c checker) refusal(ok bool, output string) string {
	if ok || c.env.Sandbox == nil {
		return ""
	}
	return c.env.Sandbox.Denied(output)
}

// howItEnded is the last line of a command's evidence.
func howItEnded(ctx context.Context, res cmdResult, want int) string {
	var te *timeoutError
	switch {
	case res.startErr != nil:
		return fmt.Sprintf("could not run it: %v", res.startErr)
	case res.stopped && errors.As(context.Cause(ctx), &te):
		return fmt.Sprintf("stopped: %v; its process group was killed", te)
	case res.stopped:
		return fmt.Sprintf("stopped: interrupted (%v)", context.Cause(ctx))
	case res.signal != 0:
		return fmt.Sprintf("killed by signal %d (%v), want exit status %d", int(res.signal), res.signal, want)
	case res.exitCode != want:
		return fmt.Sprintf("exit status %d, want %d", res.exitCode, want)
	}
	return fmt.Sprintf("exit status %d", res.exitCode)
}
