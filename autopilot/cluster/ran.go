package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync"
)

// ranTasks is what a worker remembers of the task messages it took on,
// under its checkouts (ran/), so that a restarted worker remembers too.
//
// A signed task is good for ever: its signature says who sent it, not
// when. Someone who can publish on the servers could therefore send an
// old task again as a new message (JetStream's deduplication is by a
// message id the sender chooses, and lasts 24 hours), and have it run
// again. A time limit in the signed task would refuse such a replay, but
// also a task that waited in the queue longer than the limit, which the
// queue allows (a cluster without a worker for a weekend). The worker
// remembers instead which message it took each attempt from: its
// sequence in RALPH_TASKS, which the servers assign and the sender cannot
// choose. The same message delivered again (the worker died, or handed
// the task back) is the same attempt going on; the same attempt in
// another message is a replay and is not run.
type ranTasks struct {
	dir string
	mu  sync.Mutex
}

// ranRecord is one attempt this worker took on.
type ranRecord struct {
	Run      string `json:"run"`
	Task     string `json:"task"`
	Attempt  int    `json:"attempt"`
	Sequence uint64 `json:"sequence"`
	// Result is the attempt's result once published.
	Result *Result `json:"result,omitempty"`
}

// admission is what to do with a task message.
type admission int

const (
	// admitRun runs the task: a first delivery, or the same message again
	// for an attempt not finished.
	admitRun admission = iota
	// admitFinished publishes the recorded result again and acknowledges:
	// the same message after its result was published, whose
	// acknowledgement was lost.
	admitFinished
	// admitReplay drops the message: the attempt came before in another
	// message.
	admitReplay
)

func (r *ranTasks) path(run, id string, attempt int) string {
	sum := sha256.Sum256([]byte(msgID(run, id, attempt)))
	return filepath.Join(r.dir, hex.EncodeToString(sum[:16])+".json")
}

// admit decides on claim's message and, for a first delivery, remembers
// it before anything runs.
func (r *ranTasks) admit(claim *Claim) (admission, ranRecord, error) {
	t := claim.Task
	r.mu.Lock()
	defer r.mu.Unlock()
	path := r.path(t.Run, t.ID, t.Attempt)
	rec, ok, err := readJSON[ranRecord](path)
	switch {
	case err != nil:
		return admitReplay, rec, fmt.Errorf("what this worker ran of task %s: %w", t.ID, err)
	case !ok:
		rec = ranRecord{Run: t.Run, Task: t.ID, Attempt: t.Attempt, Sequence: claim.Sequence}
		return admitRun, rec, writeJSON(r.dir, path, rec)
	case rec.Sequence != claim.Sequence:
		return admitReplay, rec, nil
	case rec.Result != nil:
		return admitFinished, rec, nil
	}
	return admitRun, rec, nil
}

// finished remembers r as the result of claim's attempt.
func (r *ranTasks) finished(claim *Claim, res Result) error {
	t := claim.Task
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := ranRecord{Run: t.Run, Task: t.ID, Attempt: t.Attempt, Sequence: claim.Sequence, Result: &res}
	return writeJSON(r.dir, r.path(t.Run, t.ID, t.Attempt), rec)
}
