// Package cluster is the wire between an autopilot coordinator and the
// workers that run its tasks on other machines, over NATS JetStream. It
// owns the connection to the servers, ralph's streams and consumers, the
// messages sent through them and their validation, the claim a worker
// holds on a task while it runs, a worker's checkouts, and the Worker that
// claims tasks and sees their loops through. It merges nothing and starts
// no process itself: the coordinator merges what it delivers, and `ralph
// worker` gives the Worker the way to start a loop and to check a config.
//
// # Streams and subjects
//
// EnsureStreams creates three streams, file-stored and replicated on as
// many servers as asked:
//
//	RALPH_TASKS    ralph.task.<task-id>    work queue: a task stays until a
//	                                       worker is done with it
//	RALPH_RESULTS  ralph.result.<task-id>  what became of each attempt; kept
//	RALPH_EVENTS   ralph.events.<task-id>  the loops' event lines, in
//	                                       batches; kept for EventsMaxAge
//
// A task id may contain '.', which makes further subject tokens; subjects
// are only ever matched exactly or with the trailing '>' wildcard, so this
// is harmless.
//
// Every message carries a Nats-Msg-Id made of its task id and attempt (and,
// for events, the batch's offset) and a digest of its signature, so a
// message published again within DedupWindow, by a coordinator that
// restarted or a worker whose first publication's acknowledgement was
// lost, is stored once, and nobody else can take its id first.
//
// # Versions
//
// Messages are JSON with snake_case keys, as the loop's files are. Until
// the autopilot's state version 2 they were camelCase (repoUrl, taskId,
// exitCode, …); Task, Result and Events read either spelling, because the
// streams outlive the processes: tasks queued, results not yet
// acknowledged, event batches and the coordinator's dispatch records that
// an earlier ralph left are read after an upgrade. An earlier ralph cannot
// read today's spelling (its worker fails such a task as invalid,
// "repoUrl: empty"; its coordinator drops such a result), so a coordinator
// and its workers run the same ralph: upgrade them together.
//
// # Trust
//
// Every message is signed with an Ed25519 nkey (Signer; the headers
// Ralph-Signer and Ralph-Signature cover its subject and its exact
// payload): the coordinator signs its tasks, each worker its results,
// refusals and event batches. Each side checks that the signer is one of
// the keys it trusts (a Keyring) before it checks the signature. A worker
// removes from the queue a task that is not signed or whose signature
// does not verify, and runs nothing of it; it hands back one signed by a
// key it does not trust, for a worker that may. The coordinator drops a
// result or batch that no trusted worker signed, and one for a task it
// never sent. A worker remembers, under its checkouts, the message it
// took each attempt from (ranTasks), so that the same attempt sent again
// in another message is never run again. Unless it trusts task commands,
// a worker runs a task's loop from its config without what would run a
// command (config.WithoutCommands), with its own agent (its -c and
// --backend). CheckCredentials refuses a server off this machine without
// credentials.
//
// # Claims
//
// Workers share one durable pull consumer on RALPH_TASKS (WorkersConsumer).
// A Claimer fetches one task at a time; the Claim is the worker's until it
// acknowledges it (Done), hands it back (Release), or stops keeping it alive
// with InProgress for longer than the consumer's AckWait, after which the
// servers give the task to another worker. The coordinator reads results
// (Results) and event batches (EventsOf) through durable consumers of its
// own (CoordinatorConsumer, EventsConsumer), so one it has not
// acknowledged is delivered again after it restarts.
//
// # The worker
//
// A Worker runs Slots claims at once. It fails a task it will not run (an
// invalid task, a config its validator refuses) with a Result saying why,
// and acknowledges it, so it is not offered again; one it may not run (a
// repository outside its allow list, a key it does not trust) it hands
// back for another worker, reporting the refusal. Otherwise it prepares the task's worktree (one
// fetch of the start the coordinator pushed as the task's work in
// progress; the worktree of a task that ended, reused), writes the config
// and objective beside it and starts the loop; while the loop runs it
// keeps the claim alive, pushes work in progress a poll after each
// iteration while the run goes on (an iteration.finished line of ralph's
// in the loop's event log, and no loop.terminate yet) and sends the log's
// new lines as Events batches at their byte offsets. When the loop ends it
// pushes the task's branch and its work in progress in one push,
// publishes the Result and then acknowledges the claim. When its context ends it asks
// the loops to stop at the end of their iteration (Hurry stops them at
// once), and when a loop has stopped it commits what the loop left
// uncommitted, pushes that as the work in progress and releases the
// claim, for another worker to continue from. A loop continued from work
// in progress writes a new log; its batches go on from the end of the
// attempt's last batch in RALPH_EVENTS.
//
// # ralph worker
//
// RunWorker is `ralph worker`: it connects, ensures the streams, makes the
// claimer and runs a Worker whose loops LoopRunner starts as `ralph loop`
// child processes, each leading its own process group and dying with the
// worker. A LoopRunner loop's Stop(runfiles.StopAtBoundary) writes a stop
// request (runfiles.RequestStop: the run ends with reason "stopped" at the
// end of its iteration), its Stop(runfiles.StopNow) sends SIGTERM (the loop
// stops its agent and exits 130). The worker returns only once every loop
// has ended.
package cluster
