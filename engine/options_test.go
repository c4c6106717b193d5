package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ralph-loop/ralph/runfiles"
)

// New names the required field a caller left out, so a wiring mistake is
// an error at start-up, not a nil dereference mid-run.
func TestNewRefusesMissingRequiredOptions(t *testing.T) {
	valid := func() Options {
		return Options{Workspace: t.TempDir(), Objective: "Build the thing.", Hats: twoHats(t),
			Backend: happy(), Reporter: nopReporter{}}
	}
	for name, c := range map[string]struct {
		change func(*Options)
		want   string
	}{
		"workspace":       {func(o *Options) { o.Workspace = "" }, "no workspace"},
		"hats":            {func(o *Options) { o.Hats = nil }, "no hats"},
		"backend":         {func(o *Options) { o.Backend = nil }, "no backend"},
		"reporter":        {func(o *Options) { o.Reporter = nil }, "no reporter"},
		"objective":       {func(o *Options) { o.Objective = "" }, "no objective"},
		"fresh objective": {func(o *Options) { o.Objective, o.Start = "", runfiles.StartFresh }, "no objective"},
		"unknown start":   {func(o *Options) { o.Start = "later" }, `unknown start mode "later"`},
	} {
		t.Run(name, func(t *testing.T) {
			o := valid()
			c.change(&o)
			_, err := New(o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	o := valid()
	o.Objective, o.Start = "", runfiles.StartResume
	_, err := New(o)
	assert.NoError(t, err, "a resumed run keeps the objective it recorded")
	_, err = New(valid())
	assert.NoError(t, err, "the zero Start is a new run")
}
