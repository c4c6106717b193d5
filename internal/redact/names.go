package redact

import (
	"net/url"
	"strings"
)

// markers are the words that make a variable's name look secret wherever
// they end a word of it (AWS_SECRET_ACCESS_KEY, GPG_PASSPHRASE).
var markers = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSPHRASE", "PASSWD"}

// lastWords make a name look secret only as its last word, whole: they are
// short, and as other words (PATH, PASS_THROUGH) or inside one (OLDPWD,
// COMPASS) they mean something else.
var lastWords = []string{"PWD", "PAT", "PASS"}

// IsSecretName reports whether an environment variable's name says its
// value is secret: one of KEY, TOKEN, SECRET, PASSWORD, PASSPHRASE or
// PASSWD (in any case) ends a word of the name, or PWD, PAT or PASS is its
// last word. Words are split at anything but a letter, and at a
// lower-to-upper case change; a plural s still ends the word. So API_KEY,
// ANTHROPIC_API_KEY, GITHUB_TOKEN, DB_PASSWORD, AWS_SECRET_ACCESS_KEY,
// AWS_ACCESS_KEY_ID, PGPASSWORD, OPENAI_APIKEY, npm_config_authToken,
// SSH_KEYS, KEY2, GPG_PASSPHRASE, MYSQL_PWD, GH_PAT and SMTP_PASS are
// secret, while a marker that only begins a longer word is not: KEYBOARD,
// KEYCHAIN, XKB_KEYMAP, TOKENIZERS_PARALLELISM; nor are PATH, PWD (the
// shell's working directory) and OLDPWD.
//
// A word that merely ends in a marker (MONKEY) counts too: such names are
// rare, and hiding a harmless value costs less than showing a secret one.
//
// Whatever its name, a variable whose value is a URL with a password in it
// (DATABASE_URL=postgres://app:pw@db/app) is hidden too: see [New].
func IsSecretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, m := range markers {
		for from := 0; ; {
			i := strings.Index(upper[from:], m)
			if i < 0 {
				break
			}
			end := from + i + len(m)
			if endsWord(name, end) {
				return true
			}
			from += i + 1
		}
	}
	return lastWordSecret(name, upper)
}

// lastWordSecret reports whether the last word of name is one of
// lastWords, and not the whole name PWD.
func lastWordSecret(name, upper string) bool {
	if upper == "PWD" {
		return false
	}
	for _, w := range lastWords {
		for _, end := range []int{len(name), len(name) - 1} { // a plural s
			start := end - len(w)
			if start < 0 || upper[start:end] != w || (end < len(name) && upper[end] != 'S') {
				continue
			}
			if start == 0 || wordBreak(name, start) {
				return true
			}
		}
	}
	return false
}

// endsWord reports whether the word that runs up to name[:end] ends there,
// allowing one plural s.
func endsWord(name string, end int) bool {
	if wordBreak(name, end) {
		return true
	}
	if name[end] == 's' || name[end] == 'S' {
		return wordBreak(name, end+1)
	}
	return false
}

// wordBreak reports whether a word ends between name[i-1] and name[i].
func wordBreak(name string, i int) bool {
	if i >= len(name) || !isLetter(name[i]) || !isLetter(name[i-1]) {
		return true
	}
	return isLower(name[i-1]) && isUpper(name[i])
}

func isLower(c byte) bool  { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool  { return 'A' <= c && c <= 'Z' }
func isLetter(c byte) bool { return isLower(c) || isUpper(c) }

// urlPassword is the password of a value that is a URL with one
// (scheme://user:password@host/…), as the value spells it and decoded; ""
// when the value is no such URL.
func urlPassword(value string) (raw, decoded string) {
	scheme, rest, ok := strings.Cut(value, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, " \t\n/") {
		return "", ""
	}
	authority, _, _ := strings.Cut(rest, "/")
	at := strings.LastIndexByte(authority, '@')
	if at < 0 {
		return "", ""
	}
	_, raw, ok = strings.Cut(authority[:at], ":")
	if !ok || raw == "" {
		return "", ""
	}
	decoded, err := url.PathUnescape(raw)
	if err != nil {
		decoded = raw
	}
	return raw, decoded
}
