package config

import (
	"slices"
	"time"

	"github.com/ralph-loop/ralph/hats"
)

// HatList converts the configured hats to the hats package's type, in file
// order. The lists are copied, so the result can be changed freely.
func (c *Config) HatList() []hats.Hat {
	list := make([]hats.Hat, len(c.Hats))
	for i, h := range c.Hats {
		list[i] = hats.Hat{
			ID:               h.ID,
			Name:             h.Name,
			Description:      h.Description,
			Triggers:         slices.Clone(h.Triggers),
			Publishes:        slices.Clone(h.Publishes),
			Instructions:     h.Instructions,
			DefaultPublishes: h.DefaultPublishes,
			MaxActivations:   h.MaxActivations,
			Concurrency:      h.Concurrency,
			Timeout:          time.Duration(h.Timeout) * time.Second,
		}
		if a := h.Aggregate; a != nil {
			list[i].Aggregate = &hats.Aggregate{Mode: a.Mode, Timeout: time.Duration(a.Timeout) * time.Second}
		}
	}
	return list
}
