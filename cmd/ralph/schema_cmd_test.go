package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSchemaPrintsTheCommittedSchema(t *testing.T) {
	r := newWorkspace(t).ralph("schema")
	require.Equal(t, 0, r.code, r.stderr)
	want, err := os.ReadFile("../../ralph.schema.json")
	require.NoError(t, err)
	assert.Equal(t, string(want), r.stdout)
}

func TestSchemaHeadlessPrintsTheCommittedStreamSchema(t *testing.T) {
	r := newWorkspace(t).ralph("schema", "--headless")
	require.Equal(t, 0, r.code, r.stderr)
	want, err := os.ReadFile("../../docs/headless.schema.json")
	require.NoError(t, err)
	assert.Equal(t, string(want), r.stdout)
}
