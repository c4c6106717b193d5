package serve

import (
	"bytes"
	"embed"
	"errors"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/hint"
)

// page is the web page and its assets, embedded so the binary serves them
// offline, with no build step and no CDN.
//
//go:embed page
var page embed.FS

// assets are the page's files, at the root of the site.
var assets = func() fs.FS {
	sub, err := fs.Sub(page, "page")
	if err != nil {
		panic(err) // the embed above has the directory
	}
	return sub
}()

var errNoAsset = &hint.Error{Err: errors.New("no such page"), Fix: "the page is at /; the API is under /api/ (/api/openapi.json lists it)"}

// page serves /, the page's assets and each iteration's page
// (/iteration/N), and nothing else: a path that is
// not already clean (.., //, a trailing /) names no asset, so no request
// reaches a file outside the embedded ones, which hold no links.
func (h *Handler) page(w http.ResponseWriter, r *http.Request) error {
	p := r.URL.Path
	if n, ok := strings.CutPrefix(p, iterationPath); ok {
		return h.iterationPage(w, r, n)
	}
	if p == "/" {
		p = "/index.html"
	}
	name := strings.TrimPrefix(p, "/")
	if path.Clean(p) != p || !fs.ValidPath(name) || strings.Contains(p, "\\") {
		return errNoAsset
	}
	data, err := fs.ReadFile(assets, name)
	if err != nil {
		return errNoAsset
	}
	setPageHeaders(w)
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
	return nil
}
