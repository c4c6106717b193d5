package main

import (
	"errors"

	"github.com/ralph-loop/ralph/config"
	"github.com/ralph-loop/ralph/pricing"
	"github.com/ralph-loop/ralph/view"
)

type pricingCmd struct {
	Model  string   `arg:"" optional:"" placeholder:"MODEL" help:"Show this model's price and how its name was matched; exit 1 if it has none."`
	Config []string `short:"c" placeholder:"FILE" help:"Config whose pricing: section is laid over the table (default ./ralph.yml, if any). Repeat to merge."`
	JSON   bool     `help:"Print JSON: an array of every price, or the one model's."`
}

func (pricingCmd) Help() string {
	return `Prints what ralph prices tokens at when an agent does not report its cost:
US dollars per million input, output, cache-read and cache-write tokens (or
per request), the day and page they were taken from, and what a config's
pricing: section adds or replaces.

Examples:
  ralph pricing
  ralph pricing claude-opus-4-8[1m] --json`
}

func (c *pricingCmd) Run(g *globals) error {
	cfg, _, err := config.LoadIn(g.Dir, c.Config, nil, configOptions(nil))
	if errors.Is(err, config.ErrNotFound) && len(c.Config) == 0 {
		cfg, err = &config.Config{}, nil // no ralph.yml here: the embedded table alone
	}
	if err != nil {
		return err
	}
	return view.WritePricing(g.stdout, pricing.Default().With(cfg.Pricing), c.Model, c.JSON)
}
