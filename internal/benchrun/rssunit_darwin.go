package main

// rssUnit is getrusage's unit of ru_maxrss: bytes on macOS.
const rssUnit = 1
