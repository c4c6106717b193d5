package view

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ralph-loop/ralph/engine/memory"
)

// WriteMemories lists memories for `ralph memory list` and `search`: each
// with its id, time, type and tags, then its text indented; as a JSON array
// when asJSON is set (an empty one when there are none).
func WriteMemories(w io.Writer, ms []memory.Memory, asJSON bool) error {
	if asJSON {
		if ms == nil {
			ms = []memory.Memory{}
		}
		return json.NewEncoder(w).Encode(ms)
	}
	if len(ms) == 0 {
		_, err := fmt.Fprintln(w, "no memories")
		return err
	}
	for _, m := range ms {
		if _, err := fmt.Fprintf(w, "%s  %s  %s%s\n  %s\n", m.ID, m.At.Local().Format("2006-01-02 15:04"), m.Type, tagSuffix(m.Tags),
			strings.ReplaceAll(m.Text, "\n", "\n  ")); err != nil {
			return err
		}
	}
	return nil
}

// MemoryRemoved says what `ralph memory rm` forgot: an id alone does not
// show it was the right one.
func MemoryRemoved(m memory.Memory) string {
	return fmt.Sprintf("removed %s (%s%s): %s", m.ID, m.Type, tagSuffix(m.Tags), FirstLine(m.Text))
}

func tagSuffix(tags []string) string {
	if len(tags) == 0 {
		return ""
	}
	return " #" + strings.Join(tags, " #")
}
