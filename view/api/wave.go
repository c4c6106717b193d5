package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ralph-loop/ralph/events"
	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/runfiles"
)

// WaveWorkerEnv is set in the environment of a wave's worker; `ralph wave
// emit` refuses to run there.
const WaveWorkerEnv = "RALPH_WAVE_WORKER"

// ErrInWaveWorker refuses a wave started by one of a wave's workers: its
// results go to the hat that collects the wave, which may start the next.
var ErrInWaveWorker = &hint.Error{
	Err: errors.New("ralph wave emit cannot run inside a wave worker: a worker handles its one event and publishes its result"),
	Fix: "publish your result with `ralph emit TOPIC PAYLOAD`; the hat that collects the wave's results may start the next wave",
}

// InWaveWorker reports whether env (os.Environ's form) is a wave worker's.
func InWaveWorker(env []string) bool {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, WaveWorkerEnv+"="); ok && v != "" && v != "0" {
			return true
		}
	}
	return false
}

// waveSeq tells apart the waves one process starts in the same nanosecond.
var waveSeq atomic.Int64

// NewWaveID is a wave's id: w-<hex nanoseconds>-<pid>-<seq>, the form
// ralph-orchestrator's ids have, which sorts by time within one process.
func NewWaveID(now time.Time) string {
	return fmt.Sprintf("w-%x-%d-%d", now.UnixNano(), os.Getpid(), waveSeq.Add(1)-1)
}

// AppendWave appends one event of Topic per payload, as a wave, with one
// write: each is checked and redacted as Append checks one event, and the
// wave is written whole or not at all. It returns the wave's id.
func (e Emit) AppendWave(payloads []json.RawMessage, now time.Time) (id, warning string, err error) {
	if len(payloads) == 0 {
		return "", "", &hint.Error{Err: errors.New("a wave needs at least one payload"),
			Fix: `give one payload per item: ralph wave emit TOPIC --payloads "item 1" "item 2"`}
	}
	r := e.Redactor
	if r == nil {
		r = redact.FromEnvironment()
	}
	path, warning, err := e.checked(r)
	if err != nil {
		return "", "", err
	}
	source := e.Source
	if source == "" {
		source = events.SourceAgent
	}
	id = NewWaveID(now)
	evs := make([]events.Event, len(payloads))
	var cutNotes []string
	for i, p := range payloads {
		ev := events.Event{TS: now.UTC(), Topic: e.Topic, Payload: r.JSON(p), Source: source,
			Hat: r.String(e.Hat), Iteration: e.Iteration, Wave: &events.Wave{WaveID: id, WaveIndex: i, WaveTotal: len(payloads)}}
		ev, cut, err := events.FitPayload(ev)
		if err != nil {
			return "", warning, err
		}
		if cut > 0 {
			cutNotes = append(cutNotes, "payload "+strconv.Itoa(i+1))
		}
		evs[i] = ev
	}
	if len(cutNotes) > 0 {
		note := fmt.Sprintf("%s too long for an event line (at most %d bytes) and cut in the middle; write a long text to a file and give its path", strings.Join(cutNotes, ", "), events.MaxLineBytes)
		warning = strings.TrimPrefix(warning+"; "+note, "; ")
	}
	return id, warning, ralphdir.Explain(path, appendAll(path, evs))
}

// checked runs Append's checks of the topic and the log, and returns the
// log's path.
func (e Emit) checked(r *redact.Redactor) (path, warning string, err error) {
	if err := refuseSecret(r, e.Topic, ""); err != nil {
		return "", "", err
	}
	if err := events.ValidateTopic(e.Topic); err != nil {
		return "", "", &hint.Error{Err: err, Fix: "a topic is dot-separated words without spaces, like review.perspective"}
	}
	if runfiles.ReservedForRalph(e.Topic) {
		return "", "", &hint.Error{Err: fmt.Errorf("the topic %s is ralph's own: the loop would reject every event of the wave", e.Topic),
			Fix: "start the wave on a topic of your own, one a hat with concurrency triggers on, like review.perspective"}
	}
	if path, err = e.logPath(); err != nil {
		return "", "", err
	}
	warning, err = e.checkRunGoing(path)
	return path, warning, err
}

// appendAll writes evs to the log at path with one write.
func appendAll(path string, evs []events.Event) (err error) {
	l, err := events.OpenLog(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := l.Close(); err == nil {
			err = cerr
		}
	}()
	return l.AppendBatch(evs)
}
