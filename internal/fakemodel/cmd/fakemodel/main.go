// Command fakemodel runs the scripted fake model server on its own, for
// shell scripts and manual runs of the agent CLIs:
//
//	fakemodel -script FILE [-addr 127.0.0.1:0] [-log FILE] [-side-models '*haiku*,*flash-lite*'] [-repeat-retries]
//
// The first line on stdout is "listening on http://127.0.0.1:PORT"; read the
// port from it. It stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/ralph-loop/ralph/internal/fakemodel"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel: error:", err)
		os.Exit(1)
	}
}

// run serves until ctx is done.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("fakemodel", flag.ContinueOnError)
	scriptPath := fs.String("script", "", "JSON script file (required)")
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	logPath := fs.String("log", "", "append the request log to this file as JSON lines")
	side := fs.String("side-models", strings.Join(fakemodel.DefaultSideModels, ","), "comma-separated model patterns answered as side requests")
	repeat := fs.Bool("repeat-retries", false, "answer a main request with the same history as the previous one with the previous answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *scriptPath == "" {
		return errors.New("-script is required")
	}
	script, err := fakemodel.LoadScript(*scriptPath)
	if err != nil {
		return err
	}
	opts := []fakemodel.Option{fakemodel.WithAddr(*addr), fakemodel.WithSideModels(splitList(*side)...)}
	if *repeat {
		opts = append(opts, fakemodel.RepeatIdenticalRetries())
	}
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("open log: %w", err)
		}
		defer f.Close()
		opts = append(opts, fakemodel.WithLog(f))
	}
	srv := fakemodel.New(script, opts...)
	url, err := srv.Start()
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintln(stdout, "listening on "+url)
	<-ctx.Done()
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
