package serve

import "embed"

// page is the web page and its assets, embedded so the binary serves them
// offline, with no build step and no CDN.
//
//go:embed page
var page embed.FS
