package hats

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckHatID(t *testing.T) {
	reg, err := NewRegistry(testHats())
	require.NoError(t, err)
	tests := []struct {
		id, wantErr string
	}{
		{id: "builder"},
		{id: CoordinatorID},
		{id: "Builder", wantErr: `no hat "Builder"; did you mean "builder"?`},
		{id: "reviwer", wantErr: `no hat "reviwer"; did you mean "reviewer"?`},
		{id: "deployer", wantErr: `no hat "deployer"`},
		{id: " builder", wantErr: `no hat " builder"; did you mean "builder"?`},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			err := reg.CheckHatID(tt.id)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			var unknown *UnknownHatError
			require.ErrorAs(t, err, &unknown)
			assert.Equal(t, tt.wantErr, err.Error())
			assert.Equal(t, "the hats are: ralph, planner, builder, reviewer", unknown.Hint())
		})
	}
}
