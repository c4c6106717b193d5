package main

import "github.com/ralph-loop/ralph/config"

type schemaCmd struct{}

func (schemaCmd) Help() string {
	return `Prints the JSON Schema (draft 2020-12) of ralph.yml, generated from the types
ralph's loader fills. Editors use it to complete and check keys: a misspelt
key, a wrong type or an unknown backend is flagged as you type. Presets
point at the published copy in their first line:

  # yaml-language-server: $schema=` + config.SchemaURL + `

Examples:
  ralph schema > ralph.schema.json
  ralph schema | jq '.["$defs"].hat.properties | keys'`
}

func (c *schemaCmd) Run(g *globals) error {
	_, err := g.stdout.Write(config.JSONSchema())
	return err
}
