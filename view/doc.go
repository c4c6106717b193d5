// Package view renders a run for people and programs: plain lines, the live
// panel, the headless JSON stream, event tables
// and the listing of a log that `ralph events` filters and follows. Each is a thin view over
// one model of a run ([Model]).
//
// What runs in a workspace as another process sees it, from ralph's files
// alone (a loop, or an autopilot and its slots, and each loop's log and its
// agents' activity), is WorkspaceReader's Watched: `ralph watch`
// (package view/watch) shows it, and view/api serves it as the Dashboard
// that `ralph serve`'s page draws. The agents'
// activity reaches other processes through each run's activity.jsonl,
// which ActivityLog writes as a reporter of `ralph loop`.
//
// Across runs: `ralph stats` adds up a workspace's runs per config and per
// hat ([ReadStats]), `ralph runs` lists them with their size and age
// ([WriteRunsOnDisk]), `ralph doctor` reports what a killed ralph left
// ([StateReport]) and `ralph worktree` the worktrees ralph made
// ([WriteWorktrees]).
package view
