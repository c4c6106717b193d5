package jsonkeys

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var names = map[string]string{"runId": "run_id", "exitCode": "exit_code"}

func TestRename(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"top level":               {`{"runId":"r","parallel":2}`, `{"run_id":"r","parallel":2}`},
		"nested in objects":       {`{"ended":{"exitCode":1},"active":{"1":{"runId":"r"}}}`, `{"ended":{"exit_code":1},"active":{"1":{"run_id":"r"}}}`},
		"nested in arrays":        {`{"queue":[{"exitCode":3}]}`, `{"queue":[{"exit_code":3}]}`},
		"new spelling wins":       {`{"runId":"old","run_id":"new"}`, `{"run_id":"new"}`},
		"values are not keys":     {`{"message":"runId","x":["exitCode"]}`, `{"message":"runId","x":["exitCode"]}`},
		"big numbers stay exact":  {`{"runId":"r","offset":9007199254740993}`, `{"offset":9007199254740993,"run_id":"r"}`},
		"nothing old, as it was":  {`{"run_id":"r"}`, `{"run_id":"r"}`},
		"an escaped quote inside": {`{"message":"say \"runId\""}`, `{"message":"say \"runId\""}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Rename([]byte(tc.in), names)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(got))
		})
	}
}

func TestRenameLeavesNewDataUntouched(t *testing.T) {
	in := []byte(`{"run_id": "r",   "lines": "x"}`)
	got, err := Rename(in, names)
	require.NoError(t, err)
	assert.Equal(t, string(in), string(got), "data without an old key is not re-encoded")
}

func TestRenameRefusesBadJSON(t *testing.T) {
	for _, bad := range []string{`{"runId": `, `{"runId": 1} {}`} {
		_, err := Rename([]byte(bad), names)
		assert.Error(t, err, bad)
		assert.Error(t, json.Unmarshal([]byte(bad), new(any)), "json.Unmarshal refuses %s too", bad)
	}
}
