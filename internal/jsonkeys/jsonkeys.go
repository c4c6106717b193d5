// Package jsonkeys reads JSON written with an earlier spelling of its keys:
// a file or message of a previous ralph whose keys have since been renamed
// (the autopilot's camelCase, now snake_case) decodes into today's types.
// It is a leaf helper.
package jsonkeys

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Rename returns data with every object key that names maps (old to new)
// renamed, at any depth. A key whose new spelling is also present keeps
// its old one, so a document that somehow has both decodes the new. Data
// in which no old key appears is returned as it is, undecoded: the cost
// falls only on what an earlier ralph wrote.
func Rename(data []byte, names map[string]string) ([]byte, error) {
	if !mentionsAny(data, names) {
		return data, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers pass through exactly, not as float64
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid character after the top-level value")
	}
	return json.Marshal(rename(v, names))
}

// mentionsAny reports whether some old key appears quoted in data; a
// string value can hold one only escaped, so this passes almost nothing
// that has none of them.
func mentionsAny(data []byte, names map[string]string) bool {
	for old := range names {
		if bytes.Contains(data, []byte(`"`+old+`"`)) {
			return true
		}
	}
	return false
}

func rename(v any, names map[string]string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, val := range v {
			v[k] = rename(val, names)
		}
		for old, new := range names {
			if val, ok := v[old]; ok {
				if _, taken := v[new]; !taken {
					v[new] = val
				}
				delete(v, old)
			}
		}
		return v
	case []any:
		for i := range v {
			v[i] = rename(v[i], names)
		}
		return v
	default:
		return v
	}
}
