// Package interrupt turns SIGINT and SIGTERM into cancellation, in two
// steps: the first cancels a context (an agent then gets SIGTERM, and
// SIGKILL once its grace period has passed), the second closes Force so the
// agent is killed at once. A user who presses Ctrl-C twice means it.
//
// On Windows, Go delivers Ctrl-C and Ctrl-Break as SIGINT (os.Interrupt)
// and the console's close, a logoff or a shutdown as SIGTERM, so the same
// two steps hold there; the first then stops the agent with
// CTRL_BREAK_EVENT and terminates its job object after the grace (see
// internal/procgroup).
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Handler watches for the signals from Listen until Stop.
type Handler struct {
	ctx    context.Context
	cancel context.CancelFunc
	force  chan struct{}
	ch     chan os.Signal
	done   chan struct{}

	mu          sync.Mutex
	onInterrupt func() // told of the first signal; nil: nobody to tell
}

// Listen starts watching for SIGINT and SIGTERM.
func Listen() *Handler {
	ctx, cancel := context.WithCancel(context.Background())
	h := &Handler{ctx: ctx, cancel: cancel, force: make(chan struct{}),
		ch: make(chan os.Signal, 2), done: make(chan struct{})}
	signal.Notify(h.ch, syscall.SIGINT, syscall.SIGTERM)
	go h.watch()
	return h
}

// Context is cancelled by the first signal.
func (h *Handler) Context() context.Context { return h.ctx }

// Force is closed by the second signal.
func (h *Handler) Force() <-chan struct{} { return h.force }

// OnInterrupt makes the first signal call f, so the user hears that ralph
// is stopping and how to make it stop at once.
func (h *Handler) OnInterrupt(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.onInterrupt = f
}

// Stop stops watching and cancels the context.
func (h *Handler) Stop() {
	signal.Stop(h.ch)
	close(h.done)
	h.cancel()
}

func (h *Handler) watch() {
	count := 0
	for {
		select {
		case <-h.done:
			return
		case <-h.ch:
			count++
			switch count {
			case 1:
				h.cancel()
				h.interrupted()
			case 2:
				close(h.force)
			}
		}
	}
}

func (h *Handler) interrupted() {
	h.mu.Lock()
	f := h.onInterrupt
	h.mu.Unlock()
	if f != nil {
		f()
	}
}
