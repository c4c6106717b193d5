package view

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ralph-loop/ralph/internal/exitcode"
	"github.com/ralph-loop/ralph/pricing"
)

// PriceMatch is one model's price as `ralph pricing MODEL` reports it: the
// name asked for, how it was matched to a row (exact, or normalized: case,
// provider prefix, context or dated suffix), and the row.
type PriceMatch struct {
	Query string `json:"query"`
	Match string `json:"match"` // exact | normalized
	pricing.Price
}

// UnknownModelError is a model with no price: what `ralph pricing MODEL`
// exits 1 with, naming the nearest models and the config key to set.
type UnknownModelError struct {
	Model   string
	Nearest []string
}

func (e *UnknownModelError) Error() string { return fmt.Sprintf("no price for model %q", e.Model) }
func (e *UnknownModelError) ExitCode() int { return exitcode.Failure }

func (e *UnknownModelError) Hint() string {
	var hint string
	if len(e.Nearest) > 0 {
		hint = "models with a price that are near: " + strings.Join(e.Nearest, ", ") + "\n"
	}
	return hint + PricingKeyHint(e.Model)
}

// PricingKeyHint says how to give model a price in the config.
func PricingKeyHint(model string) string {
	return fmt.Sprintf("give it a price in ralph.yml, in US dollars per million tokens: pricing: {%s: {input: …, output: …}}", model)
}

// WritePricing is `ralph pricing [MODEL]`: every row of t, or model's price
// and how its name was matched, or an *UnknownModelError.
func WritePricing(w io.Writer, t *pricing.Table, model string, asJSON bool) error {
	if model == "" {
		return WritePrices(w, t.All(), asJSON)
	}
	m, err := LookupPrice(t, model)
	if err != nil {
		return err
	}
	return WritePrice(w, m, asJSON)
}

// LookupPrice is model's price in t, how it matched, or an
// *UnknownModelError.
func LookupPrice(t *pricing.Table, model string) (PriceMatch, error) {
	p, ok := t.Lookup(model)
	if !ok {
		return PriceMatch{}, &UnknownModelError{Model: model, Nearest: t.Nearest(model, 3)}
	}
	m := PriceMatch{Query: model, Match: "exact", Price: p}
	if p.Model != model {
		m.Match = "normalized"
	}
	return m, nil
}

// WritePrices writes every row of a price table, as a table or as a JSON
// array.
func WritePrices(w io.Writer, prices []pricing.Price, asJSON bool) error {
	if asJSON {
		return writeJSON(w, prices)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tPER REQUEST\tAS OF\tSOURCE")
	for _, p := range prices {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Model, dollars(p.Input, p.PerRequest == 0),
			dollars(p.Output, p.PerRequest == 0), dollars(p.CacheRead, false), dollars(p.CacheWrite, false),
			dollars(p.PerRequest, false), orDash(p.AsOf), orDash(p.Source))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nUSD per million tokens, or per request. No cache price: cached tokens cost as input.")
	return err
}

// WritePrice writes one model's price and how its name was matched, as
// lines or as one JSON object.
func WritePrice(w io.Writer, m PriceMatch, asJSON bool) error {
	if asJSON {
		return writeJSON(w, m)
	}
	model := m.Model
	if m.Match == "normalized" {
		model += ", matched from " + m.Query + " (names compare without case, provider prefix, [1m] or date suffix)"
	}
	lines := [][2]string{{"model", model}}
	if m.PerRequest > 0 {
		lines = append(lines, [2]string{"per request", dollars(m.PerRequest, true)})
	}
	if m.PerRequest == 0 || m.Input > 0 || m.Output > 0 {
		lines = append(lines, [2]string{"input", perMillion(m.Input, m.Input)}, [2]string{"output", perMillion(m.Output, m.Output)},
			[2]string{"cache read", perMillion(m.CacheRead, m.Input)}, [2]string{"cache write", perMillion(m.CacheWrite, m.Input)})
	}
	lines = append(lines, [2]string{"as of", orDash(m.AsOf)}, [2]string{"source", orDash(m.Source)})
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, l := range lines {
		fmt.Fprintf(tw, "%s\t%s\n", l[0], l[1])
	}
	return tw.Flush()
}

// perMillion is a per-million price, or the input price it falls back to.
func perMillion(v, input float64) string {
	if v == 0 && input > 0 {
		return dollars(input, true) + " per million tokens (as input)"
	}
	return dollars(v, true) + " per million tokens"
}

// dollars is v as "$0.075" or "$5.00": at least cents, more digits where
// the price has them; "-" for an unset figure unless zero is a price.
func dollars(v float64, zeroIsPrice bool) string {
	if v == 0 && !zeroIsPrice {
		return "-"
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	whole, frac, _ := strings.Cut(s, ".")
	for len(frac) < 2 {
		frac += "0"
	}
	return "$" + whole + "." + frac
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
