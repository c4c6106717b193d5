package serve

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/redact"
	"github.com/ralph-loop/ralph/internal/treewatch"
	"github.com/ralph-loop/ralph/runfiles"
	"github.com/ralph-loop/ralph/view"
	"github.com/ralph-loop/ralph/view/api"
)

// Handler is `ralph serve`'s HTTP interface to one workspace: the API's
// routes, the page and its assets, and who may use them.
type Handler struct {
	dir   string
	token string
	// everyRequest says every request needs the token, not only those
	// that change something: the server is reachable from other hosts.
	everyRequest bool
	// redactor hides the server's secret values in what it serves of the
	// logs: a line an agent wrote by hand holds them in clear.
	redactor *redact.Redactor
	reader   *api.Reader
	now      func() time.Time
	// keepalive is how long a stream stays silent before it sends a
	// comment, so proxies and clients see it is alive.
	keepalive time.Duration
	// tick is how often a dashboard stream reads the workspace even when
	// the kernel reported no change.
	tick time.Duration
	// watch is the one kernel watcher every stream shares.
	watch *treewatch.Shared
	// follows read each followed log once for all its event streams.
	follows *api.Follows
	// streams bounds the streams open at once.
	streams *streamLimit
	routes  []route
	// api routes the paths under /api/, site the page and its assets:
	// two muxes, so that the page's "GET /" and the API's catch-all
	// "/api/" do not overlap.
	api, site *http.ServeMux
}

// route is one path of the API: the method it answers and how.
type route struct {
	method, path string
	serve        func(w http.ResponseWriter, r *http.Request) error
}

// NewHandler serves the workspace dir to clients that send token;
// everyRequest asks it of every request, not only of those that change
// something. r's secret values are hidden in what it serves.
func NewHandler(dir, token string, everyRequest bool, r *redact.Redactor) *Handler {
	h := &Handler{dir: dir, token: token, everyRequest: everyRequest, redactor: r, reader: api.NewReader(dir, r), now: time.Now,
		keepalive: 15 * time.Second, tick: 2 * time.Second, watch: &treewatch.Shared{}, streams: newStreamLimit(0)}
	h.follows = api.NewFollows(h.watch)
	h.routes = []route{
		{http.MethodGet, "/api/status", h.status},
		{http.MethodGet, "/api/runs", h.runs},
		{http.MethodGet, "/api/dashboard", h.dashboard},
		{http.MethodGet, "/api/dashboard/stream", h.asStream(h.dashboardStream)},
		{http.MethodGet, "/api/events", h.events},
		{http.MethodGet, "/api/events/stream", h.asStream(h.eventStream)},
		{http.MethodGet, "/api/iterations", h.iterations},
		{http.MethodGet, "/api/iterations/{n}", h.iteration},
		{http.MethodPost, "/api/stop", h.stop},
		{http.MethodPost, "/api/pause", h.pause},
		{http.MethodPost, "/api/resume", h.resume},
		{http.MethodPost, "/api/answer", h.answer},
		{http.MethodPost, "/api/guidance", h.guidance},
		{http.MethodGet, "/api/openapi.json", h.openAPI},
	}
	h.api = http.NewServeMux()
	for _, rt := range h.routes {
		h.handle(h.api, rt)
	}
	h.api.Handle("/api/", answerError(http.StatusNotFound, errNoRoute))
	h.site = http.NewServeMux()
	h.handle(h.site, route{http.MethodGet, "/", h.page})
	return h
}

// handle registers rt on mux, and a JSON 405 naming rt's method for its
// path's other methods, in place of the mux's plain-text one. A GET
// pattern also matches HEAD, which the routes do not answer: a HEAD of a
// stream would hold its connection open for no body.
func (h *Handler) handle(mux *http.ServeMux, rt route) {
	serve := rt.serve
	if rt.method != http.MethodGet {
		serve = h.withToken(serve)
	}
	mux.HandleFunc(rt.method+" "+rt.path, func(w http.ResponseWriter, r *http.Request) {
		if err := serve(w, r); err != nil {
			writeError(w, statusOf(err), err)
		}
	})
	notAllowed := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", rt.method)
		writeError(w, http.StatusMethodNotAllowed, &hint.Error{Err: errors.New(r.Method + " " + r.URL.Path + " is not allowed"),
			Fix: rt.method + " it; /api/openapi.json lists the routes"})
	}
	mux.HandleFunc(rt.path, notAllowed)
	if rt.method == http.MethodGet {
		mux.HandleFunc(http.MethodHead+" "+rt.path, notAllowed)
	}
}

// withToken refuses a request that changes something unless it carries
// the token, whatever the server's address.
func (h *Handler) withToken(serve func(w http.ResponseWriter, r *http.Request) error) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		if !h.authorized(w, r) {
			h.unauthorized(w)
			return nil
		}
		return serve(w, r)
	}
}

// answerError answers every request with err.
func answerError(status int, err error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeError(w, status, err) })
}

// routeMethods are the API's paths and their methods.
func (h *Handler) routeMethods() map[string]string {
	out := map[string]string{}
	for _, rt := range h.routes {
		out[rt.path] = rt.method
	}
	return out
}

// ServeHTTP answers one request. No response ever carries CORS headers:
// a page from elsewhere cannot read the API, and its preflights fail.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if !h.everyRequest && !loopbackHost(r.Host) {
		writeError(w, http.StatusForbidden, &hint.Error{Err: errors.New("host " + r.Host + " is not this machine's loopback"),
			Fix: "open the page at http://127.0.0.1:PORT/ or http://localhost:PORT/; to serve other hosts, pass --addr with their interface (every request then needs the token)"})
		return
	}
	if h.everyRequest && !h.authorized(w, r) {
		h.unauthorized(w)
		return
	}
	isAPI := strings.HasPrefix(r.URL.Path, "/api/")
	// A mux redirects a path that is not clean to its clean form; ralph
	// serves no such path, so it answers that there is nothing there.
	if path.Clean(r.URL.Path) != r.URL.Path {
		if isAPI {
			writeError(w, http.StatusNotFound, errNoRoute)
		} else {
			writeError(w, http.StatusNotFound, errNoAsset)
		}
		return
	}
	if isAPI {
		h.api.ServeHTTP(w, r)
		return
	}
	h.site.ServeHTTP(w, r)
}

var errNoRoute = &hint.Error{Err: errors.New("no such route"), Fix: "/api/openapi.json lists the routes"}

// authorized reports whether r carries the token: as a bearer token or,
// a GET when everyRequest asks it of GETs too, as ?token= or the page's
// cookie, the way a browser's first load of the page from the printed
// address brings it.
func (h *Handler) authorized(w http.ResponseWriter, r *http.Request) bool {
	if got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return sameToken(strings.TrimSpace(got), h.token)
	}
	if r.Method != http.MethodGet {
		// A browser sends cookies with any form's POST: a request that
		// changes something must say the token itself.
		return false
	}
	name := cookieName(r)
	// ?token= before the cookie: a browser that still has the cookie of
	// a token since replaced gets in with the new one, which replaces it.
	if r.URL.Query().Has("token") && sameToken(r.URL.Query().Get("token"), h.token) {
		// The page's assets and streams are fetched without the query:
		// the browser brings the token to them as this cookie, to this
		// server only (SameSite, and a name of this port's: a browser
		// sends a host's cookies to each of its ports), never to scripts
		// (HttpOnly).
		http.SetCookie(w, &http.Cookie{Name: name, Value: h.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		return true
	}
	c, err := r.Cookie(name)
	return err == nil && sameToken(c.Value, h.token)
}

// tokenCookie starts the name of the cookie that carries the token of a
// browser that loaded the page with ?token=, for the GETs of a server
// bound off loopback.
const tokenCookie = "ralph_serve_token"

// cookieName is the token cookie's name on the port r came in on: two
// serves on one host (two workspaces, two ports) each keep their own.
func cookieName(r *http.Request) string {
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, port, err := net.SplitHostPort(addr.String()); err == nil {
			return tokenCookie + "_" + port
		}
	}
	return tokenCookie
}

// unauthorized refuses a request without the token, and closes its
// connection: a client that does not have the token holds nothing of the
// server's once it has its answer.
func (h *Handler) unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="ralph"`)
	w.Header().Set("Connection", "close")
	writeError(w, http.StatusUnauthorized, &hint.Error{Err: errors.New("this request needs the token"),
		Fix: "send `Authorization: Bearer TOKEN`, TOKEN from " + filepath.Join(runfiles.DirName, runfiles.TokenFile) + " (ralph serve prints it at start)"})
}

// statusOf is the HTTP status that says what kind of failure err is, read
// from the kind its errors say they are (hint.Kind).
func statusOf(err error) int {
	switch {
	case hint.Has(err, hint.Conflict):
		return http.StatusConflict
	case errors.Is(err, errNoAsset), errors.Is(err, errNoRoute), errors.Is(err, fs.ErrNotExist), hint.Has(err, hint.NotFound):
		return http.StatusNotFound
	case hint.Has(err, hint.Invalid):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// errorBody is every error's JSON: what went wrong and how to fix it.
type errorBody struct {
	Error string `json:"error"`
	Hint  string `json:"hint,omitempty"`
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, errorBody{Error: err.Error(), Hint: view.HintOf(err)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client went away
}

// loopbackHost reports whether a request's Host names this machine's
// loopback. A server on loopback answers GETs without the token, so a
// page elsewhere must not reach it through a name of its own that it
// points at 127.0.0.1 (DNS rebinding): the browser would then send that
// name as the Host.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
