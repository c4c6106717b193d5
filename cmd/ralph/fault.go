package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// faultEnv names the crash-test hook: "point:n[,point:n…]" kills ralph with
// SIGKILL the n-th time it reaches the named point (see engine.Fault*), or,
// for append.torn, writes half of that step's bytes first. Only tests set it.
const faultEnv = "RALPH_TEST_CRASH_AT"

// crashHook returns the engine's fault hook for $RALPH_TEST_CRASH_AT, or nil.
func crashHook() (func(string) bool, error) {
	spec := os.Getenv(faultEnv)
	if spec == "" {
		return nil, nil
	}
	targets := map[string]int{}
	for _, part := range strings.Split(spec, ",") {
		point, nth, ok := strings.Cut(part, ":")
		n, err := strconv.Atoi(nth)
		if !ok || err != nil || n < 1 {
			return nil, fmt.Errorf("%s: want point:n, got %q", faultEnv, part)
		}
		targets[point] = n
	}
	var mu sync.Mutex
	hits := map[string]int{}
	return func(point string) bool {
		mu.Lock()
		defer mu.Unlock()
		if point == "die" {
			die()
		}
		hits[point]++
		if targets[point] != hits[point] {
			return false
		}
		if point == "append.torn" {
			return true // the engine writes half the step, then calls "die"
		}
		die()
		return false
	}, nil
}

func die() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL is not deliverable late; wait for it
}
