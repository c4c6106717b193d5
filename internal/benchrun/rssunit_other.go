//go:build unix && !darwin

package main

// rssUnit is getrusage's unit of ru_maxrss: kilobytes on Linux and the
// BSDs.
const rssUnit = 1024
