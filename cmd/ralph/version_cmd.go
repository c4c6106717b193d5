package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

type versionCmd struct{}

func (versionCmd) Help() string {
	return "Prints the version of this ralph binary and the Go it was built with.\n\nExamples:\n  ralph version"
}

func (versionCmd) Run(g *globals) error {
	v := version
	if info, ok := debug.ReadBuildInfo(); ok && v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	fmt.Fprintf(g.stdout, "ralph %s (%s, %s/%s)\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
