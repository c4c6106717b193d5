package cluster_test

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/autopilot/cluster"
	"github.com/ralph-loop/ralph/runfiles"
)

// v1Messages are a task, a result and a batch of events as the ralph
// before snake_case marshalled them (testdata/v1-messages.json, written
// by that ralph's types, not by hand).
func v1Messages() (cluster.Task, cluster.Result, cluster.Events) {
	tk := task("t1", 2)
	tk.MergeCommit = tk.BaseCommit
	tk.TaskCommands = []cluster.TaskCommand{{Name: "tests", Command: "go test ./..."}}
	tk.EventsOffset = 1234
	tk.Workers = []string{"UWORKER"}
	tk.Coordinator = "coord"
	r := result("t1", 2, "w1")
	r.ExitCode = 1
	r.Reason = "max iterations"
	r.Cost = runfiles.CostTotal{USD: 0.5}
	e := cluster.Events{Run: run, TaskID: "t1", Attempt: 2, Worker: "w1", Offset: 77, Lines: []byte("{\"topic\":\"x\"}\n")}
	return tk, r, e
}

// A message an earlier coordinator or worker left in the streams is read
// after an upgrade: its camelCase keys are today's snake_case ones.
func TestMessagesOfTheEarlierSpellingAreRead(t *testing.T) {
	data, err := os.ReadFile("testdata/v1-messages.json")
	require.NoError(t, err)
	var old struct {
		Task   cluster.Task   `json:"task"`
		Result cluster.Result `json:"result"`
		Events cluster.Events `json:"events"`
	}
	require.NoError(t, json.Unmarshal(data, &old))
	tk, r, e := v1Messages()
	assert.Equal(t, tk, old.Task)
	assert.Equal(t, r, old.Result)
	assert.Equal(t, e, old.Events)
	require.NoError(t, old.Task.Validate())
	require.NoError(t, old.Result.Validate())
	require.NoError(t, old.Events.Validate())
}

var snakeKey = regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`)

// Every message is written in snake_case, as the loop's files are, and
// reads back as it was.
func TestMessagesAreWrittenInSnakeCase(t *testing.T) {
	tk, r, e := v1Messages()
	for name, msg := range map[string]any{"task": tk, "result": r, "events": e} {
		data, err := json.Marshal(msg)
		require.NoError(t, err)
		var fields map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(data, &fields))
		for k := range fields {
			assert.Regexp(t, snakeKey, k, "a key of a %s: %s", name, data)
		}
	}
	data, err := json.Marshal(tk)
	require.NoError(t, err)
	var back cluster.Task
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, tk, back)
}
