package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

type versionCmd struct {
	JSON bool `name:"json" help:"Print one JSON object: version, commit, dirty, go and platform."`
}

func (versionCmd) Help() string {
	return "Prints the version of this ralph binary, the commit it was built from, and the Go and platform it was built for.\n\n" +
		"A released binary gives its release; one built with `go install …@version` the module version; one built with `go build` in a clone the commit (marked dirty when the clone had changes).\n\n" +
		"Examples:\n  ralph version\n  ralph version --json | jq -r .version"
}

func (c versionCmd) Run(g *globals) error {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	if c.JSON {
		return writeJSON(g.stdout, buildJSON(version, buildInfo(), platform))
	}
	fmt.Fprintln(g.stdout, describeBuild(version, buildInfo(), platform))
	return nil
}

// versionJSON is what version --json prints.
type versionJSON struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Dirty    bool   `json:"dirty,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

func buildJSON(released string, info *debug.BuildInfo, platform string) versionJSON {
	out := versionJSON{Version: buildVersion(released, info), Go: runtime.Version(), Platform: platform}
	if info == nil {
		return out
	}
	if info.GoVersion != "" {
		out.Go = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			out.Commit = s.Value
		case "vcs.modified":
			out.Dirty = s.Value == "true"
		}
	}
	return out
}

// buildInfo is what Go recorded of the build, or nil.
func buildInfo() *debug.BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return info
}

// buildVersion is what ralph calls its version: the release's (set with
// -ldflags "-X main.version=…"), else the module version Go stamped into
// the binary, else "devel".
func buildVersion(released string, info *debug.BuildInfo) string {
	if released != "" && released != "dev" {
		return released
	}
	if info != nil && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}

// describeBuild is `ralph version`'s line: the version, then the commit
// and the Go toolchain and platform, so that a bug report says exactly
// which code ran.
func describeBuild(released string, info *debug.BuildInfo, platform string) string {
	var about []string
	if rev := revision(info); rev != "" {
		about = append(about, rev)
	}
	goVersion := runtime.Version()
	if info != nil && info.GoVersion != "" {
		goVersion = info.GoVersion
	}
	about = append(about, goVersion, platform)
	return fmt.Sprintf("ralph %s (%s)", buildVersion(released, info), strings.Join(about, ", "))
}

// revision is the commit the binary was built from, as Go records it for
// a build in a version-controlled checkout: "commit 1a2b3c4d5e6f", with
// ", dirty" when the checkout had uncommitted changes. A build without
// that record (-buildvcs=false, or from the module cache, whose version
// already names the commit) has none.
func revision(info *debug.BuildInfo) string {
	if info == nil {
		return ""
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return ""
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		return "commit " + rev + ", dirty"
	}
	return "commit " + rev
}
