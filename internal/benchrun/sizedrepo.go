package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// These are the size of the sized autopilot figure's repository: about
// as many files as a mid-sized project (ralph itself has ~1,200),
// enough that checking out a worktree costs what it costs in a real one.
// It is not scaled: what the figure shows is the cost of that checkout.
const (
	sizedRepoDirs     = 40
	sizedRepoFilesDir = 40
	sizedRepoFileSize = 2048
)

// writeSizedTree writes sizedRepoDirs × sizedRepoFilesDir source-like
// files of about sizedRepoFileSize bytes each under dir/src, the same
// bytes on every run (each line is made from its file's and its own
// number), so that two runs check out the same tree.
func writeSizedTree(dir string) error {
	for d := range sizedRepoDirs {
		pkg := fmt.Sprintf("pkg%02d", d)
		if err := os.MkdirAll(filepath.Join(dir, "src", pkg), 0o755); err != nil {
			return err
		}
		for f := range sizedRepoFilesDir {
			path := filepath.Join(dir, "src", pkg, fmt.Sprintf("file%02d.go", f))
			if err := os.WriteFile(path, sizedFile(pkg, d*sizedRepoFilesDir+f), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// sizedFile is one generated file: a package clause and functions until
// it reaches sizedRepoFileSize bytes.
func sizedFile(pkg string, n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\n", pkg)
	for i := 0; b.Len() < sizedRepoFileSize; i++ {
		fmt.Fprintf(&b, "// f%d_%d returns what file %d computes at step %d.\nfunc f%d_%d(x int) int { return x*%d + %d }\n\n",
			n, i, n, i, n, i, n%97+1, i*31+n%13)
	}
	return []byte(b.String())
}
