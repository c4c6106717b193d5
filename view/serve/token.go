package serve

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ralph-loop/ralph/internal/hint"
	"github.com/ralph-loop/ralph/internal/ralphdir"
	"github.com/ralph-loop/ralph/runfiles"
)

// LoadToken reads the workspace's token, making it first when there is
// none. The token (runfiles.TokenFile) is the bearer token `ralph serve`'s
// clients send: made once, readable by its owner only, and reused by every
// later serve of the workspace, so a page or a script that has it keeps
// working across restarts. In a workspace with no .ralph/, ralph serve is a
// reader that makes nothing there: the token is kept outside it, in the
// user's cache (outsideToken; kept is false), and used from there until
// removed, .ralph/ made since or not.
func LoadToken(dir string) (token string, kept bool, err error) {
	path := runfiles.In(dir).ServeToken()
	outside, err := outsideToken(dir)
	if err != nil {
		return "", false, err
	}
	if data, err := os.ReadFile(outside); err == nil && strings.TrimSpace(string(data)) != "" {
		return strings.TrimSpace(string(data)), false, nil
	}
	if _, err := os.Lstat(filepath.Dir(path)); errors.Is(err, fs.ErrNotExist) {
		token, err := makeOutsideToken(outside)
		return token, false, err
	}
	data, err := ralphdir.ReadFile(filepath.Dir(path), path)
	if errors.Is(err, fs.ErrNotExist) {
		token, err := makeToken(path)
		return token, err == nil, err
	}
	if err != nil {
		return "", false, err
	}
	token = strings.TrimSpace(string(data))
	if token == "" {
		return "", false, &hint.Error{Err: fmt.Errorf("the token file %s is empty", path), Fix: "remove it: the next `ralph serve` makes a new token"}
	}
	return token, true, nil
}

// outsideToken is where the token of a workspace without .ralph/ is
// kept: the user's cache, one file per workspace, named by a digest of its
// absolute path.
func outsideToken(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", &hint.Error{Err: fmt.Errorf("no place for the token of %s, which has no .ralph/: %w", dir, err),
			Fix: "set HOME (or XDG_CACHE_HOME), or start a run here first: its .ralph/ keeps the token"}
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(cache, "ralph", "serve", hex.EncodeToString(sum[:12])+".token"), nil
}

// makeOutsideToken writes a new token to path, readable by its owner only.
func makeOutsideToken(path string) (string, error) {
	token, err := newToken()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	return token, os.WriteFile(path, []byte(token+"\n"), 0o600)
}

// newToken is a new random token.
func newToken() (string, error) {
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	return hex.EncodeToString(buf), nil
}

// makeToken writes a new random token to path, failing rather than
// overwriting when another serve made one meanwhile.
func makeToken(path string) (string, error) {
	token, err := newToken()
	if err != nil {
		return "", err
	}
	// A .ralph/ without its .gitignore (made by hand) ignores itself, as
	// every ralph command's does: the token never reaches a commit.
	if err := runfiles.IgnoreOwnFilesIfMissing(filepath.Dir(path)); err != nil {
		return "", err
	}
	f, err := ralphdir.OpenFile(filepath.Dir(path), path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, ralphdir.FileMode)
	if errors.Is(err, fs.ErrExist) {
		token, _, err := LoadToken(filepath.Dir(filepath.Dir(path)))
		return token, err
	}
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return "", err
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(path)
		return "", err
	}
	return token, nil
}

// sameToken compares in constant time, so how long a refusal takes says
// nothing of how much of the token was right.
func sameToken(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
