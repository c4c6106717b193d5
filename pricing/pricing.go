package pricing

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/ralph-loop/ralph/events"
)

// Price is what a model costs in USD per million tokens, or per request for a
// model billed by the request (GitHub Copilot's premium requests).
type Price struct {
	Model      string  `json:"model"`
	Input      float64 `json:"input"` // per million input tokens
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read,omitempty"`
	CacheWrite float64 `json:"cache_write,omitempty"`
	PerRequest float64 `json:"per_request,omitempty"` // per request (Copilot)
	AsOf       string  `json:"as_of,omitempty"`       // "2026-11-01": when the figures were taken from Source
	Source     string  `json:"source,omitempty"`      // the vendor's public pricing page, or "config FILE:LINE" for an override
}

// Cost is what u and requests cost at p, in USD.
//
// Input tokens are the ones not read from or written to a prompt cache (every
// backend reports them that way), so each count is priced once. A cache price
// of zero means the row gives none: those tokens are priced as input, which is
// what a vendor without a cache discount charges.
func (p Price) Cost(u events.Usage, requests int) float64 {
	cacheRead, cacheWrite := p.CacheRead, p.CacheWrite
	if cacheRead == 0 {
		cacheRead = p.Input
	}
	if cacheWrite == 0 {
		cacheWrite = p.Input
	}
	perMillion := float64(u.InputTokens)*p.Input +
		float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*cacheRead +
		float64(u.CacheWriteTokens)*cacheWrite
	return perMillion/1e6 + float64(requests)*p.PerRequest
}

// Table is a set of prices by model. The zero Table is empty and usable.
// A Table is never changed once built, so it can be shared.
type Table struct {
	rows  []Price
	byKey map[string]int // key(row.Model) → index in rows
}

//go:embed prices.csv
var embedded []byte

// defaultTable is parsed once, when first asked for: every process of
// ralph's links this package, and most (the sandbox's launcher, run for
// every confined iteration, ralph emit) price nothing. A broken prices.csv
// fails the package's tests.
var defaultTable = sync.OnceValue(func() *Table { return mustParse(embedded) })

// Default is the embedded table of the vendors' list prices.
func Default() *Table { return defaultTable() }

// With is t with overrides added, each replacing the row of the same model
// (compared as Lookup compares names) in place; new models come after t's
// rows, in the order given. t is unchanged.
func (t *Table) With(overrides []Price) *Table {
	out := &Table{rows: append([]Price(nil), t.rowsOrNil()...), byKey: map[string]int{}}
	for i, p := range out.rows {
		out.byKey[key(p.Model)] = i
	}
	for _, p := range overrides {
		k := key(p.Model)
		if i, ok := out.byKey[k]; ok {
			out.rows[i] = p
			continue
		}
		out.byKey[k] = len(out.rows)
		out.rows = append(out.rows, p)
	}
	return out
}

func (t *Table) rowsOrNil() []Price {
	if t == nil {
		return nil
	}
	return t.rows
}

// Lookup finds the price of model: a row of exactly that name, else the row
// whose name is the same once both are normalized: case, a provider prefix
// ("anthropic/", "openrouter/openai/"), a context suffix ("[1m]"), a dated
// snapshot suffix ("-20251001", "-2025-10-01", "@20251001") and "4.8" for
// "4-8" do not matter. It never picks between models by similarity: a name
// that is only close to one ("claude-opus", "gpt-5") has no price.
func (t *Table) Lookup(model string) (Price, bool) {
	if t == nil {
		return Price{}, false
	}
	for _, p := range t.rows {
		if p.Model == model {
			return p, true
		}
	}
	if i, ok := t.byKey[key(model)]; ok {
		return t.rows[i], true
	}
	return Price{}, false
}

// All is every row, in table order: the embedded rows as prices.csv lists
// them, then models only the overrides name.
func (t *Table) All() []Price {
	return append([]Price(nil), t.rowsOrNil()...)
}

// Models is the name of every row, in table order.
func (t *Table) Models() []string {
	names := make([]string, 0, len(t.rowsOrNil()))
	for _, p := range t.rowsOrNil() {
		names = append(names, p.Model)
	}
	return names
}

func mustParse(data []byte) *Table {
	rows, err := parseCSV(data)
	if err != nil {
		panic("pricing: embedded prices.csv: " + err.Error()) // cannot happen: the package's tests parse it
	}
	return (&Table{}).With(rows)
}

// columns is prices.csv's header, in order.
var columns = []string{"model", "input", "output", "cache_read", "cache_write", "per_request", "as_of", "source"}

// parseCSV reads a price table: a header naming columns, then one model a
// row; '#' starts a comment line and an empty figure is zero.
func parseCSV(data []byte) ([]Price, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.Comment = '#'
	r.FieldsPerRecord = len(columns)
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if strings.Join(header, ",") != strings.Join(columns, ",") {
		return nil, fmt.Errorf("header is %q, want %q", strings.Join(header, ","), strings.Join(columns, ","))
	}
	var rows []Price
	seen := map[string]string{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		line, _ := r.FieldPos(0)
		p, err := parseRow(rec)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if other, dup := seen[key(p.Model)]; dup {
			return nil, fmt.Errorf("line %d: %s is the same model as %s", line, p.Model, other)
		}
		seen[key(p.Model)] = p.Model
		rows = append(rows, p)
	}
}

func parseRow(rec []string) (Price, error) {
	p := Price{Model: rec[0], AsOf: rec[6], Source: rec[7]}
	if p.Model == "" || p.AsOf == "" || p.Source == "" {
		return p, errors.New("model, as_of and source are required")
	}
	figures := []*float64{&p.Input, &p.Output, &p.CacheRead, &p.CacheWrite, &p.PerRequest}
	for i, f := range figures {
		s := rec[i+1]
		if s == "" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 {
			return p, fmt.Errorf("%s %s: %s is not a price (a number, 0 or more)", p.Model, columns[i+1], s)
		}
		*f = v
	}
	return p, nil
}
