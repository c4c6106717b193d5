package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docPages are README.md and the pages of docs/, from this package.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	return append([]string{filepath.Join("..", "..", "README.md")}, pages...)
}

// markdownLink is an inline link or image: [text](target).
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link of the README and the docs leads somewhere: to a
// file of the repository and, with a #fragment, to a heading of that page.
func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	for _, page := range docPages(t) {
		text := readText(t, page)
		for _, target := range pageLinks(text) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, fragment, _ := strings.Cut(target, "#")
			file := page
			if path != "" {
				file = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
				_, err := os.Stat(file)
				if !assert.NoError(t, err, "%s links to %s, which does not exist", page, target) {
					continue
				}
			}
			if fragment != "" && strings.HasSuffix(file, ".md") {
				assert.Contains(t, headingAnchors(readText(t, file)), fragment,
					"%s links to %s, but %s has no heading with that anchor", page, target, file)
			}
		}
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// pageLinks are the link targets of a Markdown page outside code blocks
// and code spans.
func pageLinks(text string) []string {
	var out []string
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		parts := strings.Split(line, "`")
		for i := 0; i < len(parts); i += 2 {
			for _, m := range markdownLink.FindAllStringSubmatch(parts[i], -1) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// headingAnchors are the fragments GitHub gives a page's headings: the
// second heading of one text gets "-1", the third "-2".
func headingAnchors(text string) []string {
	var out []string
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		a := githubAnchor(strings.TrimSpace(strings.TrimLeft(line, "#")))
		if n := seen[a]; n > 0 {
			out = append(out, a+"-"+strconv.Itoa(n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

// githubAnchor is the fragment GitHub gives a heading of text: lower case,
// spaces as hyphens, punctuation but hyphens and underscores dropped.
func githubAnchor(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
