package main

import "github.com/ralph-loop/ralph/internal/exitcode"

// jsonOutput says how a command prints JSON on stdout.
type jsonOutput struct {
	// Flag asks for it; "" when the command always prints JSON.
	Flag string `json:"flag"`
	// Form is "document" (one JSON value, then a newline) or "lines"
	// (one JSON object per line, as the command goes).
	Form string `json:"form"`
	// With names another flag the JSON output needs, as autopilot's
	// --dry-run; "" when none.
	With string `json:"with,omitempty"`
}

// traits are what ralph capabilities says of a command beyond its flags.
type traits struct {
	// changes is set for a command that may change something: the
	// workspace, .ralph/, git, a tracker, a file it writes (a key, a
	// ralph.yml), or a running loop (a stop request, an answer). One that
	// only reads and prints is not.
	changes bool
	json    []jsonOutput
}

var (
	jsonDoc      = []jsonOutput{{Flag: "--json", Form: "document"}}
	jsonLines    = []jsonOutput{{Flag: "--json", Form: "lines"}}
	headlessJSON = jsonOutput{Flag: "--headless", Form: "lines"}
)

// commandTraits classifies every command by its path. A command missing
// here fails TestEveryCommandIsClassified, which names it: whoever adds a
// command says here whether it changes state and how it prints JSON.
var commandTraits = map[string]traits{
	"loop":             {changes: true, json: []jsonOutput{headlessJSON}},
	"chain run":        {changes: true, json: jsonDoc},
	"chain resume":     {changes: true, json: jsonDoc},
	"chain clean":      {changes: true, json: jsonDoc},
	"emit":             {changes: true}, // its --json says the payload is JSON
	"wave emit":        {changes: true}, // its --json says the payloads are JSON
	"ask":              {changes: true},
	"answer":           {changes: true},
	"guide":            {changes: true},
	"events":           {json: jsonLines},
	"validate":         {json: jsonDoc},
	"hats list":        {json: jsonDoc},
	"hats show":        {json: jsonDoc},
	"hats graph":       {json: jsonDoc},
	"config show":      {json: jsonDoc},
	"init":             {changes: true, json: []jsonOutput{{Flag: "--json", Form: "document", With: "--list"}}},
	"schema":           {json: []jsonOutput{{Form: "document"}}},
	"completion":       {},
	"status":           {json: jsonDoc},
	"stop":             {changes: true},
	"watch":            {changes: true}, // pause, resume and stop keys
	"serve":            {changes: true}, // its API emits, answers and stops
	"autopilot run":    {changes: true, json: []jsonOutput{{Flag: "--json", Form: "document", With: "--dry-run"}, headlessJSON}},
	"autopilot status": {json: jsonDoc},
	"autopilot pause":  {changes: true},
	"autopilot resume": {changes: true},
	"autopilot stop":   {changes: true},
	"worktree list":    {json: jsonDoc},
	"worktree diff":    {json: jsonDoc},
	"worktree clean":   {changes: true, json: jsonDoc},
	"inspect prompt":   {json: jsonDoc},
	"inspect output":   {json: jsonDoc},
	"inspect diff":     {json: jsonDoc},
	"stats":            {json: jsonDoc},
	"runs list":        {json: jsonDoc},
	"runs clean":       {changes: true, json: jsonDoc},
	"worker":           {changes: true},
	"cluster keygen":   {changes: true},
	"cluster pubkey":   {json: jsonDoc},
	"mcp":              {changes: true}, // its tools emit, answer and stop
	"memory add":       {changes: true, json: jsonDoc},
	"memory list":      {json: jsonDoc},
	"memory search":    {json: jsonDoc},
	"memory rm":        {changes: true, json: jsonDoc},
	"doctor":           {changes: true, json: jsonDoc}, // --fix
	"pricing":          {json: jsonDoc},
	"version":          {json: jsonDoc},
	"capabilities":     {json: jsonDoc},
}

// exitCodeInfo is one exit code and what it means.
type exitCodeInfo struct {
	Code    int    `json:"code"`
	Name    string `json:"name"`
	Meaning string `json:"meaning"`
}

// exitCodes are internal/exitcode's codes, as docs/architecture.md#exit-codes
// describes them, and kong's for a usage mistake.
var exitCodes = []exitCodeInfo{
	{exitcode.OK, "ok", "completed, or cancelled by the cancellation topic; a command did what it was asked"},
	{exitcode.Failure, "failure", "stopped on failure: consecutive failures, thrashing, malformed events, stuck, a stop request; an autopilot task failed"},
	{exitcode.Limit, "limit", "a limit was reached: iterations, runtime, cost, tokens"},
	{exitcode.Fatal, "fatal", "could not run: bad config or flags, the lock held, a backend missing; also a usage mistake"},
	{exitcode.Interrupted, "interrupted", "SIGINT or SIGTERM; a loop or autopilot goes on when run again (--resume)"},
}
