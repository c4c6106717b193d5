// Package cluster is the wire between an autopilot coordinator and the
// workers that run its tasks on other machines, over NATS JetStream. It
// owns the connection to the servers, ralph's streams and consumers, the
// messages sent through them and their validation, and the claim a worker
// holds on a task while it runs. It runs no loops and merges nothing: the
// coordinator and `ralph worker` do that with what it delivers.
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
// for events, the batch's offset), so a message published again within
// DedupWindow, by a coordinator that restarted or a worker whose first
// publication's acknowledgement was lost, is stored once.
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
package cluster
