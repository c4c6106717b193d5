package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view/api"
)

// statusRecent is how many recent events a loop's status lists, as
// `ralph status` does by default.
const statusRecent = 5

func (h *Handler) status(w http.ResponseWriter, r *http.Request) error {
	s, err := api.ReadStatus(r.Context(), h.dir, statusRecent, h.now(), h.redactor)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s)
	return nil
}

func (h *Handler) runs(w http.ResponseWriter, _ *http.Request) error {
	runs, err := runfiles.Runs(h.dir)
	if err != nil {
		return err
	}
	if runs == nil {
		runs = []runfiles.RunListing{}
	}
	writeJSON(w, http.StatusOK, runs)
	return nil
}

func (h *Handler) dashboard(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, h.reader.Dashboard(r.URL.Query().Get("task")))
	return nil
}

// eventList is a log's events as GET /api/events lists them.
type eventList struct {
	// Log is the log's path, relative to the workspace when inside it.
	Log       string     `json:"log"`
	Events    []api.Line `json:"events"`
	Malformed int        `json:"malformed"`
}

func (h *Handler) events(w http.ResponseWriter, r *http.Request) error {
	q, err := eventQuery(r.URL.Query())
	if err != nil {
		return err
	}
	path, err := q.LogPath(h.dir)
	if err != nil {
		return err
	}
	lines, malformed, err := api.Events(r.Context(), h.dir, q, h.now(), h.redactor)
	if err != nil {
		return err
	}
	if lines == nil {
		lines = []api.Line{}
	}
	writeJSON(w, http.StatusOK, eventList{Log: h.relative(path), Events: lines, Malformed: malformed})
	return nil
}

func (h *Handler) iterations(w http.ResponseWriter, r *http.Request) error {
	q, err := eventQuery(r.URL.Query())
	if err != nil {
		return err
	}
	its, err := api.Iterations(r.Context(), h.dir, q, h.redactor)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, its)
	return nil
}

func (h *Handler) stop(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Now bool `json:"now"`
	}
	if err := readBody(r, &body); err != nil {
		return err
	}
	return say(w)(api.Stop(h.dir, body.Now))
}

func (h *Handler) pause(w http.ResponseWriter, r *http.Request) error {
	if err := readBody(r, &struct{}{}); err != nil {
		return err
	}
	return say(w)(api.Pause(h.dir))
}

func (h *Handler) resume(w http.ResponseWriter, r *http.Request) error {
	if err := readBody(r, &struct{}{}); err != nil {
		return err
	}
	return say(w)(api.Resume(h.dir))
}

func (h *Handler) answer(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Task string `json:"task"`
		ID   string `json:"id"`
		Text string `json:"text"`
	}
	if err := readBody(r, &body); err != nil {
		return err
	}
	if strings.TrimSpace(body.Text) == "" {
		return &hint.Error{Err: errors.New("the answer has no text"), Fix: `send {"text": "…"}, and "id" and "task" to name the question`}
	}
	return say(w)(api.Answer(h.dir, body.Task, body.ID, body.Text, "api"))
}

func (h *Handler) guidance(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Task string `json:"task"`
		Text string `json:"text"`
	}
	if err := readBody(r, &body); err != nil {
		return err
	}
	return say(w)(api.Guide(h.dir, body.Task, body.Text))
}

// message is what a request that was done answers: the sentence the
// command line prints for it.
type message struct {
	Message string `json:"message"`
}

// say answers a request with the sentence its command prints, or its error.
func say(w http.ResponseWriter) func(string, error) error {
	return func(sentence string, err error) error {
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, message{sentence})
		return nil
	}
}

// maxBody bounds a request's body: the requests are a few fields.
const maxBody = 64 << 10

// readBody decodes r's JSON body into v; an empty body leaves v as it is.
func readBody(r *http.Request, v any) error {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return err
	}
	if len(data) > maxBody {
		return &hint.Error{Err: errors.New("the request's body is too long"), Fix: "send the few fields /api/openapi.json lists"}
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &hint.Error{Err: fmt.Errorf("the request's body: %w", err), Fix: "send a JSON object with the fields /api/openapi.json lists"}
	}
	return nil
}

// eventQuery reads `ralph events`' filters from a URL's query.
func eventQuery(v url.Values) (api.EventQuery, error) {
	for key := range v {
		if !queryKeys[key] {
			return api.EventQuery{}, &hint.Error{Err: fmt.Errorf("unknown query parameter %q", key),
				Fix: "the filters are those of `ralph events`: topic, hat, iteration, since, last, task, autopilot, run (and from, token)"}
		}
	}
	q := api.EventQuery{Topic: v.Get("topic"), Hat: v.Get("hat"), Since: v.Get("since"), Task: v.Get("task"), Run: v.Get("run")}
	var err error
	if q.Iteration, err = count(v, "iteration"); err != nil {
		return q, err
	}
	if q.Last, err = count(v, "last"); err != nil {
		return q, err
	}
	if s := v.Get("autopilot"); s != "" {
		if q.Autopilot, err = strconv.ParseBool(s); err != nil {
			return q, &hint.Error{Err: fmt.Errorf("autopilot=%q is not true or false", s), Fix: "autopilot=true reads the autopilot's own log"}
		}
	}
	return q, nil
}

// queryKeys are the query parameters the event routes read.
var queryKeys = map[string]bool{"topic": true, "hat": true, "iteration": true, "since": true, "last": true,
	"task": true, "autopilot": true, "run": true, "from": true, "token": true}

// count reads a whole number ≥ 1 from the query, 0 when absent.
func count(v url.Values, key string) (int, error) {
	s := v.Get(key)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, &hint.Error{Err: fmt.Errorf("%s=%q is not a whole number from 1", key, s), Fix: "leave it out for all events"}
	}
	return n, nil
}

// relative is path relative to the workspace when it is inside it.
func (h *Handler) relative(path string) string {
	rel, err := filepath.Rel(h.dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return filepath.ToSlash(rel)
}
