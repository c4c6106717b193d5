package procgroup

import "time"

// reapBound is how long EnsureGone keeps waiting for what is left to
// vanish once it has been killed (SIGKILL; TerminateJobObject on
// Windows). Only a process stuck in the kernel (uninterruptible sleep, a
// driver's call) outlives that by more than a moment.
const reapBound = 5 * time.Second

// reapTick is how often a dying group is checked. Nothing notifies ralph
// when processes that are not its children exit, so this polls.
const reapTick = 10 * time.Millisecond
