package main

import (
	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/view"
)

type schemaCmd struct {
	Headless bool `help:"Print the JSON Schema of a line of the --headless stream of ralph loop instead."`
}

func (schemaCmd) Help() string {
	return `Prints the JSON Schema (draft 2020-12) of ralph.yml, generated from the types
ralph's loader fills. Editors use it to complete and check keys: a misspelt
key, a wrong type or an unknown backend is flagged as you type. Presets
point at the published copy in their first line:

  # yaml-language-server: $schema=` + config.SchemaURL + `

With --headless it prints the schema of the stream ` + "`ralph loop --headless`" + ` writes
instead, one event per line (published at ` + view.HeadlessSchemaURL + `).

Examples:
  ralph schema > ralph.schema.json
  ralph schema | jq '.["$defs"].hat.properties | keys'
  ralph schema --headless | jq '.["$defs"] | keys'`
}

func (c *schemaCmd) Run(g *globals) error {
	schema := config.JSONSchema()
	if c.Headless {
		schema = view.HeadlessSchema()
	}
	_, err := g.stdout.Write(schema)
	return err
}
