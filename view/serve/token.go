package serve

import (
	"crypto/rand"
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
// working across restarts.
func LoadToken(dir string) (string, error) {
	path := runfiles.In(dir).ServeToken()
	data, err := ralphdir.ReadFile(filepath.Dir(path), path)
	if errors.Is(err, fs.ErrNotExist) {
		return makeToken(path)
	}
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", &hint.Error{Err: fmt.Errorf("the token file %s is empty", path), Fix: "remove it: the next `ralph serve` makes a new token"}
	}
	return token, nil
}

// makeToken writes a new random token to path, failing rather than
// overwriting when another serve made one meanwhile.
func makeToken(path string) (string, error) {
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	token := hex.EncodeToString(buf)
	// A .ralph/ made here ignores itself, as every ralph command's does:
	// the token never reaches a commit.
	if err := runfiles.IgnoreOwnFilesIfMissing(filepath.Dir(path)); err != nil {
		return "", err
	}
	f, err := ralphdir.OpenFile(filepath.Dir(path), path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, ralphdir.FileMode)
	if errors.Is(err, fs.ErrExist) {
		return LoadToken(filepath.Dir(filepath.Dir(path)))
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
