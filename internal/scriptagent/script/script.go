// Package script owns the format of the scripts that drive scriptagent, the
// fake coding agent of ralph's end-to-end tests: one Go type per JSON object,
// so the agent decodes what the tests encode and a test that misspells a key
// does not compile. What each key makes the agent do is documented in
// internal/scriptagent; Decode refuses keys it does not know, so a script
// written by hand fails loudly too.
package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Script is a whole script: Steps indexed by ralph's iteration, or ByHat
// indexed by how many times the hat has run; the last step repeats.
type Script struct {
	Steps []Step            `json:"steps,omitempty"`
	ByHat map[string][]Step `json:"by_hat,omitempty"`
}

// Step is what the agent does on one run. The zero Step does nothing and
// exits 0.
type Step struct {
	Write         map[string]string  `json:"write,omitempty"`
	Append        map[string]string  `json:"append,omitempty"`
	Replace       map[string]Replace `json:"replace,omitempty"`
	Sh            string             `json:"sh,omitempty"`
	Commit        string             `json:"commit,omitempty"`
	Emit          []Emit             `json:"emit,omitempty"`
	Raw           []string           `json:"raw,omitempty"`
	PrintFile     string             `json:"print_file,omitempty"`
	Say           string             `json:"say,omitempty"`
	Stderr        string             `json:"stderr,omitempty"`
	SleepMS       int                `json:"sleep_ms,omitempty"`
	Exit          int                `json:"exit,omitempty"`
	IgnoreSIGTERM bool               `json:"ignore_sigterm,omitempty"`
	SpawnChild    bool               `json:"spawn_child,omitempty"`
	WhenFile      map[string]string  `json:"when_file,omitempty"`
	WhenLines     map[string]int     `json:"when_lines,omitempty"`
	Else          *Step              `json:"else,omitempty"`
}

// Emit is one event the agent publishes with `ralph emit`; JSON passes
// --json, so Payload must then be a JSON value.
type Emit struct {
	Topic   string `json:"topic"`
	Payload string `json:"payload,omitempty"`
	Target  string `json:"target,omitempty"`
	JSON    bool   `json:"json,omitempty"`
}

// Replace replaces the first Old in a file with New. In JSON it is the
// pair ["old", "new"].
type Replace struct {
	Old, New string
}

// MarshalJSON writes the pair ["old", "new"].
func (r Replace) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]string{r.Old, r.New})
}

// UnmarshalJSON reads the pair ["old", "new"], and nothing else.
func (r *Replace) UnmarshalJSON(data []byte) error {
	var pair []string
	if err := json.Unmarshal(data, &pair); err != nil {
		return err
	}
	if len(pair) != 2 {
		return fmt.Errorf("replace: want [old, new], got %d strings", len(pair))
	}
	r.Old, r.New = pair[0], pair[1]
	return nil
}

// Decode reads one script from r, refusing keys it does not know: a step
// that says "sleep" for "sleep_ms" would otherwise pass while testing
// nothing.
func Decode(r io.Reader) (Script, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var sc Script
	if err := dec.Decode(&sc); err != nil {
		return Script{}, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Script{}, errors.New("trailing data after the script")
	}
	return sc, nil
}

// ReadFile decodes the script at path.
func ReadFile(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, err
	}
	sc, err := Decode(bytes.NewReader(data))
	if err != nil {
		return Script{}, fmt.Errorf("parse %s: %w", path, err)
	}
	return sc, nil
}

// Marshal encodes the script as the agent reads it.
func (sc Script) Marshal() ([]byte, error) {
	return json.Marshal(sc)
}

// WriteFile writes the script to path.
func (sc Script) WriteFile(path string) error {
	data, err := sc.Marshal()
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
