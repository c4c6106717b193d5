//go:build !unix

package main

import "os"

func signalOf(*os.ProcessState) (int, bool) { return 0, false }
