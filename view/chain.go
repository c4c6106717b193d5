package view

import (
	"os"

	"github.com/ralph-loop/ralph/engine/chain"
	"github.com/ralph-loop/ralph/runfiles"
)

// ChainHere is the chain (`ralph chain run`) whose step is what runs in
// the workspace dir, and the directory of that step's loop, which the
// views read instead of the workspace's .ralph/: a chain runs there, or
// the last one ran after the workspace's own loop started. The step is
// the last one that started (the one under way, or where the chain
// ended). ok is false when the workspace's own loop is what runs here.
func ChainHere(dir string) (place *runfiles.ChainPlace, step runfiles.Dir, ok bool) {
	d := runfiles.In(dir)
	st, err := chain.Latest(d)
	if err != nil || len(st.Steps) == 0 {
		return nil, "", false
	}
	running := lockAlive(d.ChainLock())
	if !running {
		own, _, err := runfiles.Checkpoint{Path: d.State()}.Load()
		if err == nil && own.StartedAt.After(st.UpdatedAt) {
			return nil, "", false
		}
	}
	n := st.Steps[len(st.Steps)-1].N
	where := *st
	where.Current = n
	place = &runfiles.ChainPlace{ID: st.ID, Name: st.Plan.Name, Step: n, Steps: len(st.Plan.Steps),
		Label: st.Plan.Steps[n-1].Label(), Status: string(st.Status), Running: running, Where: where.Where()}
	return place, d.ChainStep(st.ID, n), true
}

// lockAlive reports whether the lock file at path names a live process on
// this host, without trying the lock.
func lockAlive(path string) bool {
	info, err := runfiles.ReadLockInfo(path)
	host, _ := os.Hostname()
	if err != nil || info.PID <= 0 || (info.Host != "" && info.Host != host) {
		return false
	}
	return runfiles.ProcessAlive(info.PID)
}
