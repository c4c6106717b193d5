package checklist

import (
	"fmt"
	"path/filepath"
)

// Objective is the task of a SPEC-mode run on the checklist at path: take
// the first open box, do it, check it, commit, one box per iteration.
func Objective(path string) string {
	return fmt.Sprintf(`Work through the specification in %s. Each markdown checkbox in it is a task: "- [ ]" is open, "- [x]" is done.

Each iteration, take the first open task and do all of it:
1. Read the spec and the code it touches; do not guess.
2. Implement the task completely, with tests where the code has tests.
3. Verify it: build, run the tests and linters the repository uses, and fix what fails.
4. Mark the task done in %s by changing its "- [ ]" to "- [x]"; change no other box.
5. Commit the work and the spec together, with a message that names the task.

Do one task per iteration, then stop. ralph counts a checked box as progress and ends the run when every box is checked.`, filepath.Base(path), filepath.Base(path))
}
