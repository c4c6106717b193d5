package events

import "fmt"

// AppendBatch writes evs as consecutive lines with one write(2), so a
// process killed at any instant has written all of them or none (the kernel
// does not split a single append to a regular file), and no other appender's
// line can land between them. ralph relies on this to record a step and its
// consequences together.
func (l *Log) AppendBatch(evs []Event) error {
	if len(evs) == 0 {
		return nil
	}
	var buf []byte
	for _, ev := range evs {
		line, err := prepareLine(ev)
		if err != nil {
			return fmt.Errorf("append to event log %s: %w", l.path, err)
		}
		buf = append(buf, line...)
	}
	if _, err := l.f.Write(buf); err != nil {
		return fmt.Errorf("append to event log %s: %w", l.path, err)
	}
	return nil
}

// AppendRaw writes bytes that are already encoded lines (or a newline that
// closes a torn line) with one write(2).
func (l *Log) AppendRaw(b []byte) error {
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("append to event log %s: %w", l.path, err)
	}
	return nil
}
