package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSlotIdleCountsOnlyWhileTasksWait(t *testing.T) {
	dir := t.TempDir()
	log := `{"ts":"2026-01-01T00:00:00Z","topic":"task.assigned","payload":{"task":"a","slot":"1"}}
{"ts":"2026-01-01T00:00:00.1Z","topic":"task.assigned","payload":{"task":"b","slot":"2"}}
{"ts":"2026-01-01T00:00:01Z","topic":"task.finished","payload":{"task":"a","slot":"1"}}
{"ts":"2026-01-01T00:00:01.25Z","topic":"task.assigned","payload":{"task":"c","slot":"1"}}
{"ts":"2026-01-01T00:00:02Z","topic":"task.finished","payload":{"task":"b","slot":"2"}}
{"ts":"2026-01-01T00:00:09Z","topic":"task.finished","payload":{"task":"c","slot":"1"}}
`
	if err := os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".ralph", "autopilot-events.jsonl"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	// Slot 2 stands free from 2 s on, but no task waits by then: only
	// slot 1's wait for c counts.
	idle, _, err := slotIdle(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	if idle != 250*time.Millisecond {
		t.Fatalf("idle = %v, want 250ms", idle)
	}
}

// The time starts are held behind the merge queue (more finished tasks
// waiting to merge than there are slots) is idle, but not open.
func TestSlotIdleOpenLeavesOutTheTimeStartsAreHeld(t *testing.T) {
	dir := t.TempDir()
	log := `{"ts":"2026-01-01T00:00:00Z","topic":"autopilot.started","payload":{"run_id":"r","parallel":1}}
{"ts":"2026-01-01T00:00:00Z","topic":"task.assigned","payload":{"task":"a","slot":"1"}}
{"ts":"2026-01-01T00:00:00.1Z","topic":"task.assigned","payload":{"task":"b","slot":"2"}}
{"ts":"2026-01-01T00:00:01Z","topic":"task.finished","payload":{"task":"a","slot":"1"}}
{"ts":"2026-01-01T00:00:01.25Z","topic":"task.assigned","payload":{"task":"c","slot":"1"}}
{"ts":"2026-01-01T00:00:02Z","topic":"task.finished","payload":{"task":"b","slot":"2"}}
{"ts":"2026-01-01T00:00:03Z","topic":"task.completed","payload":{"task":"a"}}
{"ts":"2026-01-01T00:00:03.5Z","topic":"task.assigned","payload":{"task":"d","slot":"2"}}
`
	if err := os.MkdirAll(filepath.Join(dir, ".ralph"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".ralph", "autopilot-events.jsonl"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	// Slot 2 stands free from 2 s to 3.5 s; from 2 s to 3 s two finished
	// tasks wait to merge with one slot, so only the last 0.5 s is open.
	idle, open, err := slotIdle(dir, 4)
	if err != nil {
		t.Fatal(err)
	}
	if idle != 1500*time.Millisecond || open != 500*time.Millisecond {
		t.Fatalf("idle, open = %v, %v; want 1.5s, 0.5s", idle, open)
	}
}
