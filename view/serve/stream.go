package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/treewatch"
	"github.com/ralph-loop/ralph/view"
	"github.com/ralph-loop/ralph/view/api"
)

// sse writes one Server-Sent Events stream, each write pushed out at once.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	// quiet is since when nothing was sent.
	quiet time.Time
}

// streamWriteTimeout bounds each write of a stream: a client that stops
// reading loses its stream, and the place it held, rather than keeping
// them forever.
const streamWriteTimeout = 30 * time.Second

// startSSE answers with a stream; from then on errors are events, not
// statuses.
func startSSE(w http.ResponseWriter) (*sse, error) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, rc: http.NewResponseController(w)}
	return s, s.flush()
}

// send writes an event: id (none when ""), its name and data, a data: line
// for each of its lines.
func (s *sse) send(id, name string, data []byte) error {
	var b bytes.Buffer
	if id != "" {
		fmt.Fprintf(&b, "id: %s\n", id)
	}
	data = bytes.ReplaceAll(bytes.TrimRight(data, "\r\n"), []byte("\n"), []byte("\ndata: "))
	fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data)
	return s.write(b.Bytes())
}

// keepalive sends a comment when nothing was sent for every.
func (s *sse) keepalive(every time.Duration) error {
	if time.Since(s.quiet) < every {
		return nil
	}
	return s.write([]byte(": keepalive\n\n"))
}

// write sends data at once, within streamWriteTimeout.
func (s *sse) write(data []byte) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := s.w.Write(data); err != nil {
		return err
	}
	return s.flush()
}

func (s *sse) flush() error {
	s.quiet = time.Now()
	return s.rc.Flush()
}

// eventStream is GET /api/events/stream: the events of the log the query
// picks when the client connects, those it holds and those appended
// after, each with its Next offset as id, so a client that reconnects
// with the last id it got (Last-Event-ID, or ?from=) gets each event
// once.
func (h *Handler) eventStream(w http.ResponseWriter, r *http.Request) error {
	st, err := h.streamStart(r)
	if err != nil {
		return err
	}
	s, err := startSSE(w)
	if err != nil {
		return nil //nolint:nilerr // the client went away: nothing to answer
	}
	for _, l := range st.last {
		if s.send(strconv.FormatInt(l.Next, 10), "event", st.data(l)) != nil {
			return nil
		}
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	batches, done := follow(ctx, h.follows, st.path, st.from)
	tick := time.NewTicker(h.keepalive / 2)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-done:
			s.fail(ctx, err)
			return nil
		case recs := <-batches:
			for _, rec := range recs {
				// Lines that are not events are left out, as `ralph
				// events --json` leaves them out.
				if rec.Err != nil || !st.filter.Keep(rec) {
					continue
				}
				// The id is where the next line starts in the log, as
				// written: a client resumes there.
				l := api.LineOf(h.redactor, rec)
				if s.send(strconv.FormatInt(l.Next, 10), "event", st.data(l)) != nil {
					return nil // the client went away
				}
			}
		case <-tick.C:
			if s.keepalive(h.keepalive) != nil {
				return nil
			}
		}
	}
}

// eventStreamStart is where an event stream starts: its log, filter and
// offset, and the last N events to send first when ?last=N asks.
type eventStreamStart struct {
	path   string
	filter view.EventFilter
	from   int64
	last   []api.Line
	// text: each message's data has a second line, the event's text as
	// `ralph events` shows it (view.EventText), a JSON string; autopilot
	// says the log is the autopilot's, whose lines read otherwise.
	text, autopilot bool
}

// data is what a message of the stream carries of l: the log's line, and
// with ?text=true its text on a second data line (EventSource joins them
// with a newline; the line itself has none), so a page shows what the
// command line shows without a renderer of its own.
func (st eventStreamStart) data(l api.Line) []byte {
	if !st.text {
		return l.Event
	}
	ev, err := events.ParseLine(l.Event)
	if err != nil {
		return l.Event
	}
	text, _ := json.Marshal(view.EventText(ev, st.autopilot))
	return append(append(slices.Clip(l.Event), '\n'), text...)
}

// streamStart reads a stream's request; its errors are the client's
// answer, before the stream starts.
func (h *Handler) streamStart(r *http.Request) (st eventStreamStart, err error) {
	values := r.URL.Query()
	if v := values.Get("text"); v != "" {
		if st.text, err = strconv.ParseBool(v); err != nil {
			return st, &hint.Error{Err: fmt.Errorf("text=%q is not true or false", v), Fix: "text=true adds each event's text as `ralph events` shows it"}
		}
		values.Del("text")
	}
	q, err := eventQuery(values)
	st.autopilot = q.Autopilot
	if err == nil {
		st.filter, err = q.Filter(h.now())
	}
	if err == nil {
		st.path, err = q.LogPath(h.dir)
	}
	var resumed bool
	if err == nil {
		st.from, resumed, err = resumeOffset(r, st.path)
	}
	if err != nil || resumed || q.Last == 0 {
		return st, err
	}
	// The last N of what the log holds (read back in bounded memory), then
	// every new one: the stream goes on after the last of them.
	if st.last, _, err = api.Events(r.Context(), h.dir, q, h.now(), h.redactor); err == nil && len(st.last) > 0 {
		st.from = st.last[len(st.last)-1].Next
	}
	return st, err
}

// follow runs follows.Follow on its own, handing over its batches (the
// same records every stream of the log is handed: read, never changed);
// done gets how it ended.
func follow(ctx context.Context, follows *api.Follows, path string, from int64) (<-chan []events.Record, <-chan error) {
	batches, done := make(chan []events.Record), make(chan error, 1)
	go func() {
		done <- follows.Follow(ctx, path, from, func(recs []events.Record) error {
			select {
			case batches <- recs:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	return batches, done
}

// resumeOffset is where a stream starts in the log at path: after the
// last event a reconnecting client got (Last-Event-ID, or ?from=), which
// must be the start of a line of the log, or its start.
func resumeOffset(r *http.Request, path string) (int64, bool, error) {
	s := r.Header.Get("Last-Event-ID")
	if s == "" {
		s = r.URL.Query().Get("from")
	}
	if s == "" {
		return 0, false, nil
	}
	bad := func(why string) error {
		return &hint.Error{Err: fmt.Errorf("the stream cannot resume at %q: %s", s, why),
			Fix: "send the id of the last event received as Last-Event-ID (or ?from=), or neither to start from the log's start"}
	}
	from, err := strconv.ParseInt(s, 10, 64)
	if err != nil || from < 0 {
		return 0, false, bad("not an offset in the log")
	}
	if from == 0 {
		return 0, true, nil
	}
	if ok, err := api.StartsLine(path, from); err != nil || !ok {
		return 0, false, bad("no line of " + path + " starts there")
	}
	return from, true, nil
}

// fail tells the client why its stream ends, unless it ends because the
// client went or the server shuts down.
func (s *sse) fail(ctx context.Context, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	data, _ := json.Marshal(errorBody{Error: err.Error(), Hint: view.HintOf(err)})
	_ = s.send("", "error", data)
}

// coalesce is how long a dashboard stream waits after a change before it
// reads the workspace, so a burst of writes is one read and one event.
const coalesce = 50 * time.Millisecond

// dashboardStream is GET /api/dashboard/stream: the workspace's Dashboard
// (its task's slot selected) as a `dashboard` event at once and again
// whenever it changes, seen by the kernel's notifications on the files it
// was read from, and read again every tick in case one was missed.
func (h *Handler) dashboardStream(w http.ResponseWriter, r *http.Request) error {
	task := r.URL.Query().Get("task")
	watch := h.watch.Subscribe("")
	defer watch.Close()
	s, err := startSSE(w)
	if err != nil {
		return nil //nolint:nilerr // the client went away: nothing to answer
	}
	ctx := r.Context()
	d := &dashboardSender{s: s, reader: api.NewReader(h.dir, h.redactor), watch: watch, task: task}
	if d.send() != nil {
		return nil
	}
	tick := time.NewTicker(h.tick)
	defer tick.Stop()
	var settle <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-watch.C():
			if settle == nil {
				settle = time.After(coalesce)
			}
		case <-settle:
			settle = nil
			if d.send() != nil {
				return nil
			}
		case <-tick.C:
			if d.send() != nil || s.keepalive(h.keepalive) != nil {
				return nil
			}
		}
	}
}

// dashboardSender reads the workspace and sends its Dashboard when it
// differs from the last one sent.
type dashboardSender struct {
	s      *sse
	reader *api.Reader
	watch  *treewatch.Sub
	task   string
	last   []byte
}

func (d *dashboardSender) send() error {
	data, err := json.Marshal(d.reader.Dashboard(d.task))
	if err != nil {
		return err
	}
	for _, dir := range d.reader.Paths() {
		_ = d.watch.Add(dir) // one that does not exist yet is tried again on the next read
	}
	if bytes.Equal(data, d.last) {
		return nil
	}
	d.last = data
	return d.s.send("", "dashboard", data)
}
