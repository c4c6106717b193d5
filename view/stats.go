package view

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/plural"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// Stats is `ralph stats`: the runs of a workspace, the current one and the
// archived ones, added up from their event logs, in all, per config (or
// preset) and per hat.
type Stats struct {
	// Since is the earliest start of a run counted; zero counts them all.
	Since   time.Time    `json:"since,omitzero"`
	Total   StatsGroup   `json:"total"`
	Configs []StatsGroup `json:"configs"`
	Hats    []StatsGroup `json:"hats"`
	// Chains adds up the runs of each chain run's steps (ralph chain run),
	// by the chain run's id; none where no chain ran.
	Chains []StatsGroup `json:"chains,omitempty"`
}

// StatsGroup adds up some runs: all of them, a config's, or those a hat
// worked in (and then only that hat's iterations).
type StatsGroup struct {
	// Name is the config file (relative to the workspace, with the preset
	// -H laid over it), or the hat's id.
	Name string `json:"name"`
	Runs int    `json:"runs"`
	// Endings counts the runs by how they ended: a termination reason
	// (completed, max_iterations, interrupted, …), "running", or
	// "unfinished" for a run cut off without a loop.terminate (ralph was
	// killed).
	Endings map[string]int `json:"endings"`
	// SuccessRate is the share of the runs that are over (all but the
	// running one) that completed; nil when none is over.
	SuccessRate *float64 `json:"success_rate"`
	// Iterations counts the agent's runs (iteration.finished lines: an
	// iteration repeated after a rate limit or an interruption counts
	// again, as it costs again).
	Iterations int `json:"iterations"`
	// DurationMS is the runs' runtime as their loop.terminate says (the
	// iterations' time for a run without one); a hat's is its iterations'.
	DurationMS int64        `json:"duration_ms"`
	Tokens     events.Usage `json:"tokens"`
	// CostUSD is what is known of the cost: reported by the agents or, for
	// CostComputed, partly computed from tokens at the model's price.
	CostUSD      float64 `json:"cost_usd"`
	CostComputed bool    `json:"cost_computed,omitempty"`
	// CostUnknownIterations counts the iterations whose cost is unknown (a
	// model without a price): CostUSD leaves them out.
	CostUnknownIterations int `json:"cost_unknown_iterations"`
}

// Cost is the group's cost as CostText reads it.
func (g StatsGroup) Cost() runfiles.CostTotal {
	return runfiles.CostTotal{USD: g.CostUSD, Computed: g.CostComputed, Unknown: g.CostUnknownIterations > 0}
}

// ReadStats adds up the runs of workspace that started at since or later
// (all of them for a zero since). Each log is read once, line by line in
// constant memory, and only the lines that can be ralph's loop.started,
// iteration.finished or loop.terminate are decoded.
func ReadStats(workspace string, since time.Time) (Stats, error) {
	st := Stats{Since: since, Total: newGroup("all runs"), Configs: []StatsGroup{}, Hats: []StatsGroup{}}
	runs, err := runfiles.Runs(workspace)
	if err != nil {
		return st, err
	}
	configs, hats, chains := map[string]*StatsGroup{}, map[string]*StatsGroup{}, map[string]*StatsGroup{}
	for _, r := range runs {
		if !since.IsZero() && r.Started.Before(since) {
			continue
		}
		f, err := foldRun(workspace, filepath.Join(workspace, r.Log))
		if err != nil {
			return st, err
		}
		f.addTo(&st.Total, r.Ended)
		f.addTo(groupOf(configs, f.config), r.Ended)
		if r.Chain != "" {
			f.addTo(groupOf(chains, r.Chain), r.Ended)
		}
		for _, h := range f.hats {
			g := groupOf(hats, h.Name)
			g.Iterations += h.Iterations
			g.DurationMS += h.DurationMS
			g.Tokens = g.Tokens.Add(h.Tokens)
			g.addCost(h)
			g.countRun(r.Ended)
		}
	}
	st.Total.rate()
	st.Configs, st.Hats = sortedGroups(configs), sortedGroups(hats)
	if len(chains) > 0 {
		st.Chains = sortedGroups(chains)
	}
	return st, nil
}

func newGroup(name string) StatsGroup { return StatsGroup{Name: name, Endings: map[string]int{}} }

func groupOf(m map[string]*StatsGroup, name string) *StatsGroup {
	g, ok := m[name]
	if !ok {
		ng := newGroup(name)
		g = &ng
		m[name] = g
	}
	return g
}

func (g *StatsGroup) countRun(ended string) {
	g.Runs++
	g.Endings[ended]++
}

func (g *StatsGroup) addCost(o StatsGroup) {
	g.CostUSD += o.CostUSD
	g.CostComputed = g.CostComputed || o.CostComputed
	g.CostUnknownIterations += o.CostUnknownIterations
}

// rate works out SuccessRate from Endings.
func (g *StatsGroup) rate() {
	over := g.Runs - g.Endings["running"]
	if over == 0 {
		g.SuccessRate = nil
		return
	}
	r := float64(g.Endings[string(runfiles.ReasonCompleted)]) / float64(over)
	g.SuccessRate = &r
}

// sortedGroups are the groups with the most runs first, then by name.
func sortedGroups(m map[string]*StatsGroup) []StatsGroup {
	out := make([]StatsGroup, 0, len(m))
	for _, g := range m {
		g.rate()
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b StatsGroup) int {
		return cmp.Or(cmp.Compare(b.Runs, a.Runs), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// runFold is what one log says for the stats.
type runFold struct {
	config    string
	hats      []StatsGroup // in the order they first worked
	runtimeMS int64
	ended     bool
}

// addTo adds the run to g: one run, its iterations, runtime and cost.
func (f *runFold) addTo(g *StatsGroup, ended string) {
	g.countRun(ended)
	var iterMS int64
	for _, h := range f.hats {
		g.Iterations += h.Iterations
		g.Tokens = g.Tokens.Add(h.Tokens)
		g.addCost(h)
		iterMS += h.DurationMS
	}
	if f.ended {
		g.DurationMS += f.runtimeMS
	} else {
		g.DurationMS += iterMS
	}
}

// The topics the fold decodes; a line without one of them is skipped
// unread. A topic is plain ASCII, so a line that is one of them has it
// as it is.
var statsNeedles = [][]byte{[]byte(runfiles.TopicIterationFinished), []byte(runfiles.TopicLoopStarted), []byte(runfiles.TopicLoopTerminate)}

// finishedFields are the fields of an iteration.finished payload the
// stats read, taken while the line is decoded (events.Field): most of a
// log's decoded lines are these, and encoding/json would cost most of
// the fold.
type finishedFields struct {
	hat, source               []byte
	durationMS, input, output int
	cacheRead, cacheWrite     int
	cost                      float64
	fields                    []events.Field
}

func newFinishedFields() *finishedFields {
	f := &finishedFields{}
	f.fields = []events.Field{{Key: "hat", Bytes: &f.hat}, {Key: "duration_ms", Int: &f.durationMS},
		{Key: "cost_usd", Float: &f.cost}, {Key: "cost_source", Bytes: &f.source},
		{Key: "tokens", Obj: []events.Field{{Key: "input_tokens", Int: &f.input}, {Key: "output_tokens", Int: &f.output},
			{Key: "cache_read_tokens", Int: &f.cacheRead}, {Key: "cache_write_tokens", Int: &f.cacheWrite}}}}
	return f
}

// forTopic zeroes the fields and hands them to the decoder for
// iteration.finished lines, so a key a line leaves out reads as zero.
func (f *finishedFields) forTopic(topic string) []events.Field {
	if topic != runfiles.TopicIterationFinished {
		return nil
	}
	f.hat, f.source, f.durationMS, f.input, f.output, f.cacheRead, f.cacheWrite, f.cost = nil, nil, 0, 0, 0, 0, 0, 0
	return f.fields
}

func (f *finishedFields) record() runfiles.IterationFinishedRecord {
	return runfiles.IterationFinishedRecord{Hat: string(f.hat), DurationMS: int64(f.durationMS), CostUSD: f.cost,
		CostSource: runfiles.CostSource(f.source), Usage: events.Usage{InputTokens: int64(f.input), OutputTokens: int64(f.output),
			CacheReadTokens: int64(f.cacheRead), CacheWriteTokens: int64(f.cacheWrite)}}
}

// foldRun reads the log at path once, in constant memory.
func foldRun(workspace, path string) (runFold, error) {
	f := runFold{config: "(no config)"}
	file, err := os.OpenFile(path, os.O_RDONLY|ralphdir.NoFollow, 0)
	if err != nil {
		return f, ralphdir.Explain(path, fmt.Errorf("read %s: %w", path, err))
	}
	defer file.Close()
	var dec events.Decoder
	fin := newFinishedFields()
	started := false
	err = events.ScanLines(file, func(rec events.Record) error {
		if rec.Err != nil || !containsAny(rec.Line, statsNeedles) {
			return nil
		}
		ev, filled, err := dec.ParseLineFields(rec.Line, fin.forTopic)
		if err != nil || ev.Source != events.SourceRalph {
			return nil
		}
		switch ev.Topic {
		case runfiles.TopicLoopStarted:
			if !started {
				started = true
				var p runfiles.LoopStartedRecord
				runfiles.Decode(ev, &p)
				f.config = configName(workspace, p)
			}
		case runfiles.TopicIterationFinished:
			p := fin.record()
			if !filled {
				p = runfiles.IterationFinishedRecord{}
				runfiles.Decode(ev, &p)
			}
			f.addIteration(p)
		case runfiles.TopicLoopTerminate:
			var p runfiles.TerminateRecord
			runfiles.Decode(ev, &p)
			f.ended, f.runtimeMS = true, p.RuntimeMS
		}
		return nil
	})
	if err != nil {
		return f, fmt.Errorf("read %s: %w", path, err)
	}
	return f, nil
}

func containsAny(line []byte, needles [][]byte) bool {
	for _, n := range needles {
		if bytes.Contains(line, n) {
			return true
		}
	}
	return false
}

func (f *runFold) addIteration(p runfiles.IterationFinishedRecord) {
	name := cmp.Or(p.Hat, "(no hat)")
	i := slices.IndexFunc(f.hats, func(h StatsGroup) bool { return h.Name == name })
	if i < 0 {
		f.hats = append(f.hats, StatsGroup{Name: name})
		i = len(f.hats) - 1
	}
	h := &f.hats[i]
	h.Iterations++
	h.DurationMS += p.DurationMS
	h.Tokens = h.Tokens.Add(p.Usage)
	switch p.CostSource {
	case runfiles.CostUnknown:
		h.CostUnknownIterations++
	case runfiles.CostComputed:
		h.CostUSD += p.CostUSD
		h.CostComputed = true
	default:
		h.CostUSD += p.CostUSD
	}
}

// configName names a run's config: its file relative to the workspace,
// and the preset -H laid over it.
func configName(workspace string, p runfiles.LoopStartedRecord) string {
	name := p.Config
	if rel, err := filepath.Rel(workspace, name); err == nil && filepath.IsAbs(name) && filepath.IsLocal(rel) {
		name = rel
	}
	if p.Launch != nil && p.Launch.Hats != "" {
		name = cmp.Or(name, "(no config)") + " -H " + p.Launch.Hats
	}
	return cmp.Or(name, "(no config)")
}

// WriteStats renders `ralph stats`: a line on all the runs, then a table
// per config and one per hat.
func WriteStats(w io.Writer, st Stats, loc *time.Location) error {
	if st.Total.Runs == 0 {
		what := "no runs here yet; start one with `ralph loop`"
		if !st.Since.IsZero() {
			what = "no run started since " + st.Since.In(loc).Format("2006-01-02 15:04") + "; ralph runs lists them all"
		}
		_, err := fmt.Fprintln(w, what)
		return err
	}
	head := plural.Count(st.Total.Runs, "run", "runs")
	if !st.Since.IsZero() {
		head += " since " + st.Since.In(loc).Format("2006-01-02 15:04")
	}
	fmt.Fprintf(w, "%s: %s; %s, %s, %s tokens, %s\n\n", head, endingsText(st.Total), plural.Count(st.Total.Iterations, "iteration", "iterations"),
		humanDuration(time.Duration(st.Total.DurationMS)*time.Millisecond), humanCount(st.Total.Tokens.Total()), statsCostText(st.Total))
	if err := writeStatsTable(w, "CONFIG", st.Configs); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := writeStatsTable(w, "HAT", st.Hats); err != nil || len(st.Chains) == 0 {
		return err
	}
	fmt.Fprintln(w)
	return writeStatsTable(w, "CHAIN", st.Chains)
}

func writeStatsTable(w io.Writer, what string, groups []StatsGroup) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tRUNS\tSUCCESS\tITER\tTIME\tTOKENS\tCOST\tENDINGS\n", what)
	for _, g := range groups {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%s\t%s\n", Sanitize(g.Name), g.Runs, rateText(g.SuccessRate), g.Iterations,
			humanDuration(time.Duration(g.DurationMS)*time.Millisecond), humanCount(g.Tokens.Total()), statsCostText(g), endingsText(g))
	}
	return tw.Flush()
}

// endingsText is "completed 3, max_iterations 1", the most frequent first.
func endingsText(g StatsGroup) string {
	names := slices.SortedFunc(maps.Keys(g.Endings), func(a, b string) int {
		return cmp.Or(cmp.Compare(g.Endings[b], g.Endings[a]), cmp.Compare(a, b))
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, g.Endings[n])
	}
	return strings.Join(parts, ", ")
}

func rateText(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", *r*100)
}

// statsCostText is CostText with the number of iterations whose cost is
// unknown: "$1.2300 + unknown (3 iterations)".
func statsCostText(g StatsGroup) string {
	text := CostText(g.Cost())
	if g.CostUnknownIterations > 0 {
		text += fmt.Sprintf(" (%s)", plural.Count(g.CostUnknownIterations, "iteration", "iterations"))
	}
	return text
}
