// Package procgroup runs a command as the leader of its own process group
// and makes sure that, when ralph is done with it, nothing of the group is
// left: not the command, not what it started in the background, and not
// what it started that left the group.
//
// It owns six things:
//
//   - Starting a command in a new process group that it leads (Setpgid),
//     so that one signal to -pgid reaches everything it spawned ([Start]).
//   - Marking everything the command starts: the group's [Mark], a random
//     word in an environment variable ([MarkEnv]) that every descendant
//     inherits, names the processes that left the group and its session
//     (a daemon that called setsid, a double fork), so that stopping the
//     group stops them too; and [StopMarked] stops them after the ralph
//     that started the group died, from a mark it recorded. On Linux the
//     marked processes are found through /proc; a process that both leaves
//     the group and clears its environment is not found. Elsewhere nothing
//     is found: what left the group is out of reach, as it always was.
//   - Stopping that group gently, then firmly: SIGTERM to the whole group
//     (and its marked processes), then SIGKILL once a grace period has
//     passed, or at once when the caller's force channel closes
//     ([Group.Stop], [Group.Wait]).
//   - Waiting, after the leader has exited, until kill(-pgid, 0) reports
//     ESRCH, that is until no member is left, zombies included, and no
//     process carries the group's mark ([Group.EnsureGone]).
//   - Not outliving ralph. On Linux the leader is started with a parent
//     death signal (SIGKILL), so a ralph killed outright takes the leader
//     with it, even one it was still forking: without it such a child
//     would run the agent unrecorded, beside the ralph that resumes.
//   - Reaping orphans. On Linux, [Start] makes ralph a child subreaper
//     (PR_SET_CHILD_SUBREAPER), so members orphaned by the leader's exit
//     are reparented to ralph rather than to PID 1, and ralph collects
//     their exit status itself. This is needed because in a container PID 1
//     is often a program that never reaps (or ralph itself under a shell
//     that does not): the dead members would stay zombies, and a zombie
//     still counts as a member, so the group would look alive forever.
//
// Whoever calls [Group.EnsureGone] must have waited for the leader first
// (exec.Cmd.Wait): reaping by group would otherwise steal the leader's exit
// status. The package is a leaf that imports nothing of ralph's; backends
// and criteria both run their processes through it.
//
// # Windows
//
// Windows has no process groups to signal, and a group there is a job
// object ([Start]): the command starts suspended, is put in a job of its
// own with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, and only then resumed, so
// that everything it starts is in the job too. It is also the root of a
// new console process group (CREATE_NEW_PROCESS_GROUP), which the
// terminal's Ctrl-C does not reach. A stop sends CTRL_BREAK_EVENT to that
// group, the one gentle stop Windows has, and terminates the job
// (TerminateJobObject) once the grace has passed; without a console to
// send it through, the job is terminated at once. [Group.EnsureGone]
// waits until the job holds no process. Since ralph holds the job's only
// handle, which Windows closes when ralph exits however it exits, an
// agent dies with its ralph there, and marks have nothing to find:
// [StopMarked] finds nothing, as another process's environment cannot be
// read there anyway. [Detach] makes a new console process group.
//
// Elsewhere (neither Unix nor Windows) a Group is its command alone:
// stopping it kills the command, and what the command started is not
// reached.
package procgroup
