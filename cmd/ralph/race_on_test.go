//go:build race

package main

// raceBuild: this test binary runs under the race detector, which holds
// several times the memory ralph would. The ralphs its tests start are a
// plain build (buildPlainRalph), save the command-line scenarios'
// (TestScripts), which run this one.
const raceBuild = true
