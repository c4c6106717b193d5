package config

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/ralph-loop/ralph/pricing"
)

// priceKeys are the keys of one model under pricing:, in USD per million
// tokens but per_request.
var priceKeys = []string{"input", "output", "cache_read", "cache_write", "per_request"}

// pricingSection decodes pricing:, a mapping of model name to its price,
// which pricing.Table.With lays over the embedded table. Each price's
// Source says where it was written.
func (l *loader) pricingSection(c *Config) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		if n.Kind != yaml.MappingNode {
			l.problem(n, "write one model a line below pricing:, e.g. pricing: {my-model: {input: 3.0, output: 15.0}}",
				"%s: expected a mapping of model names to prices, got %s", path, describe(n))
			return
		}
		c.Pricing = nil
		for i := 0; i+1 < len(n.Content); i += 2 {
			if p, ok := l.price(n.Content[i], n.Content[i+1], path); ok {
				c.Pricing = append(c.Pricing, p)
			}
		}
	}
}

// price decodes one model's price: input and output, or per_request alone
// for a model billed by the request. Its Source is the model's line, or,
// where a later file changes its figures, the first such figure's.
func (l *loader) price(k, v *yaml.Node, path string) (pricing.Price, bool) {
	p := pricing.Price{Model: k.Value}
	sub := path + "." + k.Value
	if k.Value == "" {
		l.problem(k, "name the model as the agent CLI does, e.g. claude-sonnet-4-5", "%s: a model without a name", path)
		return p, false
	}
	if v.Kind != yaml.MappingNode {
		l.problem(v, fmt.Sprintf("give its prices per million tokens, e.g. %s: {input: 3.0, output: 15.0}", k.Value),
			"%s: expected a mapping of prices, got %s", sub, describe(v))
		return p, false
	}
	set, written := map[string]bool{}, k
	figure := func(dst *float64) func(*yaml.Node, string) {
		return func(n *yaml.Node, path string) {
			if l.fileIndex(l.origin[n]) > l.fileIndex(l.origin[written]) {
				written = n // a later file lays this figure over the model
			}
			v, ok := l.number(n, path)
			switch {
			case ok && v < 0:
				l.problem(n, "use a price in US dollars, 0 or more", "%s must not be negative, got %g", path, v)
			case ok:
				*dst, set[lastKey(path)] = v, true
			}
		}
	}
	dst := map[string]*float64{"input": &p.Input, "output": &p.Output, "cache_read": &p.CacheRead,
		"cache_write": &p.CacheWrite, "per_request": &p.PerRequest}
	fields := make([]field, len(priceKeys))
	for i, key := range priceKeys {
		fields[i] = field{key, figure(dst[key])}
	}
	before := len(l.problems)
	l.section(v, sub, fields, nil)
	if len(l.problems) > before {
		return p, false
	}
	if !set["per_request"] && (!set["input"] || !set["output"]) {
		l.problem(k, fmt.Sprintf("give both, in US dollars per million tokens, e.g. %s: {input: 3.0, output: 15.0}; or per_request: for a model billed by the request", k.Value),
			"%s: input and output are required", sub)
		return p, false
	}
	p.Source = fmt.Sprintf("config %s:%d", l.origin[written], written.Line)
	return p, true
}
