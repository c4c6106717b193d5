package linelog_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ralph-loop/ralph/internal/linelog"
)

func hide(s string) string { return strings.ReplaceAll(s, "s3cret", "[redacted]") }

func TestALineIsTheMessageAlone(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(linelog.New(&b, linelog.Options{Prefix: "ralph worker: ", Redact: hide})).With("worker", "w1")
	log.Info("task t-1: loop started", "task", "t-1", "attempt", 2)
	log.Debug("not shown at info")
	line := b.String()
	assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d) ralph worker: task t-1: loop started\n$`, line)
}

func TestAttributesFollowTheMessageWhenAsked(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(linelog.New(&b, linelog.Options{Attrs: true, Redact: hide})).With("worker", "w1")
	log.Warn("task t-1: pushing its branch: s3cret", "task", "t-1", "attempt", 2, "why", "a s3cret here")
	assert.True(t, strings.HasSuffix(b.String(), ` task t-1: pushing its branch: [redacted] worker=w1 task=t-1 attempt=2 why="a [redacted] here"`+"\n"), b.String())
}

func TestRedactingHidesSecretsAndDropsAttributesUnlessAsked(t *testing.T) {
	var plain, debug bytes.Buffer
	slog.New(linelog.Redacting(slog.NewTextHandler(&plain, nil), hide, false)).With("task", "t-1").Warn("lost s3cret", "attempt", 1)
	slog.New(linelog.Redacting(slog.NewTextHandler(&debug, nil), hide, true)).With("task", "s3cret").Warn("lost s3cret", "attempt", 1)
	assert.Contains(t, plain.String(), `msg="lost [redacted]"`+"\n")
	assert.Contains(t, debug.String(), `msg="lost [redacted]" task=[redacted] attempt=1`+"\n")
}
