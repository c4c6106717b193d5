package redact

import "strings"

const maskOpen, maskClose = "[redacted:", "]"

// Mask is what a secret's value is written as: [redacted:NAME], NAME the
// variable that holds it.
func Mask(name string) string { return maskOpen + name + maskClose }

// Masked returns the names of the variables whose values s holds masked
// (see Mask), in order; none when s was written with no secret in it.
func Masked(s string) []string {
	var names []string
	for {
		i := strings.Index(s, maskOpen)
		if i < 0 {
			return names
		}
		s = s[i+len(maskOpen):]
		name, rest, ok := strings.Cut(s, maskClose)
		if !ok {
			return names
		}
		if name == "" || strings.ContainsAny(name, " [") {
			continue // no mask: look on past its opening
		}
		names = append(names, name)
		s = rest
	}
}
