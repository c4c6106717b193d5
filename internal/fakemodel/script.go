package fakemodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// Script is what the fake model answers: one [Turn] per main request, in order.
type Script struct {
	Turns []Turn `json:"turns"`
}

// Turn is one scripted model answer: optional text followed by zero or more
// tool calls, or an HTTP error instead of an answer.
type Turn struct {
	Text  string     `json:"text,omitempty"`
	Tools []ToolCall `json:"tools,omitempty"`
	Error *ErrorTurn `json:"error,omitempty"`
}

// ToolCall is one portable tool call. Exactly one field is set; the server maps
// it onto whatever tool the request offers (see the package doc).
type ToolCall struct {
	Write *WriteCall `json:"write,omitempty"`
	Shell *ShellCall `json:"shell,omitempty"`
	Read  *ReadCall  `json:"read,omitempty"`
	// Call names a tool of the CLI directly and passes Input unchanged, for
	// tools the portable calls do not cover (e.g. Claude Code's Edit).
	Call *RawCall `json:"call,omitempty"`
}

// WriteCall creates (or overwrites) a file. A relative Path is made absolute
// against the agent's working directory when the server can find it.
type WriteCall struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// ShellCall runs a shell command in the agent's working directory.
type ShellCall struct {
	Command string `json:"command"`
}

// ReadCall reads a file.
type ReadCall struct {
	Path string `json:"path"`
}

// RawCall is a tool call given verbatim: Input is a JSON object for function
// tools, or a JSON string for freeform (custom) tools such as Codex's apply_patch.
type RawCall struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
}

// ErrorTurn makes the server answer the request with an HTTP error in the
// shape of the API that was called.
type ErrorTurn struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
	// Type is the Anthropic/OpenAI error type; derived from Status when empty.
	Type string `json:"type,omitempty"`
	// headers go with the answer (a usage limit's reset, Limit).
	headers map[string]string
}

// LoadScript reads and validates a JSON script file.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("load script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return Script{}, fmt.Errorf("load script %s: %w", path, err)
	}
	return s, nil
}

// ParseScript decodes and validates a JSON script. Unknown fields are errors,
// so a misspelt key ("tool" for "tools") fails loudly instead of being ignored.
func ParseScript(data []byte) (Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("parse script: %w", err)
	}
	if err := s.Validate(); err != nil {
		return Script{}, err
	}
	return s, nil
}

// Validate reports the first malformed turn, numbered from 1 as in the request log.
func (s Script) Validate() error {
	for i, t := range s.Turns {
		if err := t.validate(); err != nil {
			return fmt.Errorf("turn %d: %w", i+1, err)
		}
	}
	return nil
}

func (t Turn) validate() error {
	if t.Error != nil {
		if t.Text != "" || len(t.Tools) > 0 {
			return errors.New("an error turn cannot also have text or tools")
		}
		if t.Error.Status < 400 || t.Error.Status > 599 {
			return fmt.Errorf("error status %d is not an HTTP error (400-599)", t.Error.Status)
		}
		return nil
	}
	for j, c := range t.Tools {
		if err := c.validate(); err != nil {
			return fmt.Errorf("tool %d: %w", j+1, err)
		}
	}
	return nil
}

func (c ToolCall) validate() error {
	n := 0
	for _, set := range []bool{c.Write != nil, c.Shell != nil, c.Read != nil, c.Call != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("needs exactly one of write, shell, read, call")
	}
	switch {
	case c.Write != nil && c.Write.Path == "":
		return errors.New("write needs a path")
	case c.Shell != nil && c.Shell.Command == "":
		return errors.New("shell needs a command")
	case c.Read != nil && c.Read.Path == "":
		return errors.New("read needs a path")
	case c.Call != nil && c.Call.Name == "":
		return errors.New("call needs a name")
	}
	return nil
}
