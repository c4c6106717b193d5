package serve

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"strconv"

	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/view/api"
)

// iterationPath is where an iteration's page is: /iteration/N.
const iterationPath = "/iteration/"

// iterationView reads iteration n (as the path has it) of the run the
// query's run picks (the current or last by default).
func (h *Handler) iterationView(r *http.Request, number string) (api.IterationView, error) {
	for key := range r.URL.Query() {
		if key != "run" && key != "token" {
			return api.IterationView{}, &hint.Error{Err: fmt.Errorf("unknown query parameter %q", key), Fix: "an iteration's page takes run=ID, and nothing else"}
		}
	}
	n, err := strconv.Atoi(number)
	if err != nil || n < 1 {
		return api.IterationView{}, &hint.Error{Err: fmt.Errorf("%q is not an iteration", number), Fix: "iterations are numbered from 1"}
	}
	run, err := api.InspectRun(r.Context(), h.dir, r.URL.Query().Get("run"), h.redactor)
	if err != nil {
		return api.IterationView{}, err
	}
	return run.View(r.Context(), n, h.redactor)
}

// iteration answers GET /api/iterations/{n}: the iteration's prompt,
// output and diff as JSON.
func (h *Handler) iteration(w http.ResponseWriter, r *http.Request) error {
	v, err := h.iterationView(r, r.PathValue("n"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// iterationPage answers GET /iteration/N: the same as a page of its own,
// made on the server by html/template, which escapes every value: the
// prompt, the output and the diff are all agent-influenced text.
func (h *Handler) iterationPage(w http.ResponseWriter, r *http.Request, n string) error {
	v, err := h.iterationView(r, n)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := iterationTemplate.Execute(&b, v); err != nil {
		return err
	}
	setPageHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, err = w.Write(b.Bytes())
	return err
}

// setPageHeaders are every page's: no script but the page's own, no frame.
func setPageHeaders(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'")
	w.Header().Set("X-Frame-Options", "DENY")
}

var iterationTemplate = template.Must(template.New("iteration").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>ralph · run {{.Run}} · iteration {{.Iteration}}</title>
<link rel="stylesheet" href="/style.css">
</head>
<body class="iteration-page">
<header>
<h1>iteration {{.Iteration}}{{with .Prompt}} · hat {{.Hat}}{{end}}</h1>
<nav><a href="/">the run</a>{{range .Iterations}} · <a href="/iteration/{{.}}?run={{$.Run}}">{{.}}</a>{{end}}</nav>
<p class="meta">run {{.Run}}</p>
</header>
{{range .Missing}}<section class="missing" data-part="{{.Part}}"><h2>{{.Part}}</h2><p>{{.Error}}</p>{{with .Hint}}<p class="hint">{{.}}</p>{{end}}</section>
{{end}}
{{with .Prompt}}<section id="prompt"><h2>prompt</h2>
<p class="meta">{{.File}} · {{.Bytes}} bytes · sha256 {{.SHA256}}{{if gt .Attempts 1}} · attempt {{.Attempt}} of {{.Attempts}}{{end}}{{if not .Intact}} · <strong>the file no longer matches the log</strong>{{end}}</p>
<pre>{{.Text}}</pre></section>
{{end}}
{{with .Output}}<section id="output"><h2>output</h2>
<p class="meta">{{if .Outcome}}{{.Outcome}}{{end}}{{with .Message}} · {{.}}{{end}} · raw output {{.RawOutput}}</p>
<h3>final text</h3><pre>{{.FinalText}}</pre>
<h3>activity</h3><pre>{{range .Activity}}{{.}}
{{end}}</pre></section>
{{end}}
{{with .Diff}}<section id="diff"><h2>diff</h2>
{{if .Commits}}<ul class="commits">{{range .Commits}}<li><code>{{.Hash}}</code> {{.Subject}}</li>{{end}}</ul>{{else}}<p class="meta">no commit</p>{{end}}
{{if .Patch}}<pre>{{.Patch}}</pre>{{else}}<p class="meta">no file changed</p>{{end}}</section>
{{end}}
</body>
</html>
`))
