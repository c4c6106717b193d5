package cluster

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// The headers that carry a message's signature: the signer's public key
// (an nkey, U… for the keys `ralph cluster keygen` makes) and its Ed25519
// signature over the message, base64url without padding.
const (
	SignerHeader    = "Ralph-Signer"
	SignatureHeader = "Ralph-Signature"
)

// signContext opens what a signature covers, so that a signature made for
// ralph's messages means nothing anywhere else, and a change of format
// can never be mistaken for the old one.
const signContext = "ralph-cluster-v1\n"

// signedBytes is what a message's signature covers: its subject and its
// payload, the exact bytes sent. The subject is in it so that a task
// signed for one subject cannot be replayed on another, where a reader
// that looks at the subject would take it for something else.
func signedBytes(subject string, data []byte) []byte {
	b := make([]byte, 0, len(signContext)+len(subject)+1+len(data))
	b = append(b, signContext...)
	b = append(b, subject...)
	b = append(b, '\n')
	return append(b, data...)
}

// Signer signs the messages one side sends: the coordinator its tasks, a
// worker its results, refusals and event batches. Its seed never leaves
// it: not in a message, a log line or an error.
type Signer struct {
	kp  nkeys.KeyPair
	pub string
}

// NewSigner signs with kp, which must hold a seed.
func NewSigner(kp nkeys.KeyPair) (*Signer, error) {
	if _, err := kp.Seed(); err != nil {
		return nil, errors.New("a signing key needs its seed, not only its public key")
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, err
	}
	if !signingPrefix(pub) {
		return nil, fmt.Errorf("a %s key cannot sign; make one with `ralph cluster keygen` (or nk -gen user)", keyKind(pub))
	}
	return &Signer{kp: kp, pub: pub}, nil
}

// PublicKey is the key that verifies the signer's signatures: the one the
// other side trusts.
func (s *Signer) PublicKey() string { return s.pub }

// sign adds the signer's key and its signature of subject and data to h.
func (s *Signer) sign(subject string, data []byte, h nats.Header) error {
	sig, err := s.kp.Sign(signedBytes(subject, data))
	if err != nil {
		return fmt.Errorf("signing %s: %w", subject, err)
	}
	h.Set(SignerHeader, s.pub)
	h.Set(SignatureHeader, base64.RawURLEncoding.EncodeToString(sig))
	return nil
}

// signingPrefix reports whether public is a key of a kind that signs:
// user, account or operator (nk -gen user|account|operator).
func signingPrefix(public string) bool {
	switch nkeys.Prefix(public) {
	case nkeys.PrefixByteUser, nkeys.PrefixByteAccount, nkeys.PrefixByteOperator:
		return true
	default:
		return false
	}
}

func keyKind(public string) string {
	if p := nkeys.Prefix(public); p != nkeys.PrefixByteUnknown {
		return p.String()
	}
	return "unknown"
}

// Errors of a message's signature. A message that has them is never acted
// on.
var (
	// ErrUnsigned is a message without a signature: not sent by ralph, or
	// by a ralph that signs nothing (older than its signatures).
	ErrUnsigned = errors.New("it is not signed")
	// ErrBadSignature is a message whose signature does not verify with
	// the trusted key it names: forged, or altered on the way.
	ErrBadSignature = errors.New("its signature does not verify: it was forged or altered")
)

// UntrustedError is a message signed by a key the receiver does not
// trust. Its signature was not checked.
type UntrustedError struct {
	Key string
	// Role is who the receiver trusts, for the message: "coordinator" or
	// "worker".
	Role string
}

func (e *UntrustedError) Error() string {
	return fmt.Sprintf("it is signed by %s, which is not a %s key this side trusts", e.Key, e.Role)
}

// Keyring is the public keys one side trusts: a worker its coordinators',
// a coordinator its workers'.
type Keyring struct {
	role string
	keys map[string]nkeys.KeyPair
}

// NewKeyring trusts keys, public nkeys, for messages of role
// ("coordinator" or "worker"). A seed is refused without being repeated.
func NewKeyring(role string, keys ...string) (*Keyring, error) {
	k := &Keyring{role: role, keys: map[string]nkeys.KeyPair{}}
	for _, key := range keys {
		if err := k.add(strings.TrimSpace(key)); err != nil {
			return nil, err
		}
	}
	return k, nil
}

func (k *Keyring) add(key string) error {
	if looksLikeSeed(key) {
		return errors.New("a seed (a private key, S…) was given where a public key belongs; " +
			"keep the seed where it is and trust its public key, which `ralph cluster pubkey` prints")
	}
	if !nkeys.IsValidPublicKey(key) || !signingPrefix(key) {
		return fmt.Errorf("%q is not a public nkey (U… and 56 characters, as `ralph cluster keygen` prints)", key)
	}
	kp, err := nkeys.FromPublicKey(key)
	if err != nil {
		return fmt.Errorf("%q: %w", key, err)
	}
	k.keys[key] = kp
	return nil
}

// looksLikeSeed reports whether s may be a seed, which is never echoed.
func looksLikeSeed(s string) bool {
	return len(s) > 2 && s[0] == 'S' && strings.ContainsRune("UAONPCX", rune(s[1])) && len(s) >= 50
}

// ReadKeyring trusts, for messages of role, each of values: a public key,
// or a file of them (one a line; blank lines and # comments aside; ~ is
// the home directory), such as what `ralph cluster keygen > FILE` writes.
func ReadKeyring(role string, values []string) (*Keyring, error) {
	k := &Keyring{role: role, keys: map[string]nkeys.KeyPair{}}
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if looksLikeSeed(v) {
			return nil, k.add(v)
		}
		if nkeys.IsValidPublicKey(v) {
			if err := k.add(v); err != nil {
				return nil, err
			}
			continue
		}
		if err := k.readFile(v); err != nil {
			return nil, err
		}
	}
	return k, nil
}

func (k *Keyring) readFile(path string) error {
	full, err := expandHome(path)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(full)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%q is neither a public nkey (U…, 56 characters) nor a file of them", path)
	}
	if err != nil {
		return fmt.Errorf("the trusted keys in %s: %w", path, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := k.add(line); err != nil {
			if looksLikeSeed(line) {
				return fmt.Errorf("%s:%d holds a seed, a private key: trust its public key instead, "+
					"and keep the seed where only its owner can read it", path, n)
			}
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	return sc.Err()
}

// Len is how many keys k trusts.
func (k *Keyring) Len() int {
	if k == nil {
		return 0
	}
	return len(k.keys)
}

// Keys are the trusted keys, sorted.
func (k *Keyring) Keys() []string {
	if k == nil {
		return nil
	}
	keys := make([]string, 0, len(k.keys))
	for key := range k.keys {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

// verify says which trusted key signed a message of subject with payload
// data and headers h. The signer must be trusted before its signature is
// checked: a key nobody trusts is not worth the work, and its message is
// refused either way (an *UntrustedError).
func (k *Keyring) verify(subject string, data []byte, h nats.Header) (string, error) {
	signer, sig := h.Get(SignerHeader), h.Get(SignatureHeader)
	if signer == "" || sig == "" {
		return "", ErrUnsigned
	}
	kp, ok := k.keys[signer]
	if !ok {
		if !nkeys.IsValidPublicKey(signer) {
			return "", fmt.Errorf("%w (the signer %q is not a public key)", ErrBadSignature, trimForLog(signer))
		}
		return "", &UntrustedError{Key: signer, Role: k.role}
	}
	raw, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return "", ErrBadSignature
	}
	if err := kp.Verify(signedBytes(subject, data), raw); err != nil {
		return "", fmt.Errorf("%w (signer %s)", ErrBadSignature, signer)
	}
	return signer, nil
}

// trimForLog bounds what a log line repeats of a header someone else wrote.
func trimForLog(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// Roles of the keys, for the default seed files and messages.
const (
	RoleCoordinator = "coordinator"
	RoleWorker      = "worker"
)

// DefaultSeedPath is where a role's seed is kept unless said otherwise:
// $XDG_CONFIG_HOME/ralph/<role>.nk, or ~/.config/ralph/<role>.nk.
func DefaultSeedPath(role string) (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no directory for ralph's keys: %w", err)
	}
	return filepath.Join(dir, "ralph", role+".nk"), nil
}

// WriteNewSeed makes a new key pair and writes its seed to path, which
// must not exist (a key in use is never replaced), readable by its owner
// alone in a directory only its owner may enter when ralph makes it. It
// returns the public key; the seed is not returned.
func WriteNewSeed(path string) (string, error) {
	full, err := expandHome(path)
	if err != nil {
		return "", err
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return "", err
	}
	defer kp.Wipe()
	seed, err := kp.Seed()
	if err != nil {
		return "", err
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
		return "", err
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return "", &SetupError{Err: fmt.Errorf("%s exists already; ralph never replaces a key", path),
			Fix: "keep it: its public key (which `ralph cluster pubkey` prints) is what the other side trusts; to make another key, give --seed a new file"}
	}
	if err != nil {
		return "", err
	}
	_, err = f.Write(append(seed, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(full)
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return pub, nil
}

// ReadSigner reads the seed at path (~ is the home directory): a file that
// holds an nkey seed (as `ralph cluster keygen` or nk -gen user writes it)
// or a NATS .creds file. The file must not be readable by others.
func ReadSigner(path string) (*Signer, error) {
	full, err := expandHome(path)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(full)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no key at %s: %w", path, fs.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, &SetupError{Err: fmt.Errorf("the key %s can be read by others (mode %04o)", path, perm),
			Fix: "make it readable by you alone: chmod 600 " + path}
	}
	data, err := os.ReadFile(full)
	if err != nil {
		return nil, err
	}
	kp, err := parseSeed(data)
	if err != nil {
		return nil, fmt.Errorf("the key %s: %w", path, err)
	}
	return NewSigner(kp)
}

// parseSeed finds the seed in a seed file or a .creds file. Its errors
// never quote the file.
func parseSeed(data []byte) (nkeys.KeyPair, error) {
	if bytes.Contains(data, []byte("-----BEGIN")) {
		kp, err := nkeys.ParseDecoratedNKey(data)
		if err != nil {
			return nil, errors.New("no nkey seed in it")
		}
		return kp, nil
	}
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kp, err := nkeys.FromSeed([]byte(line))
		if err != nil {
			return nil, errors.New("its first line is not an nkey seed (S…); make one with `ralph cluster keygen`")
		}
		return kp, nil
	}
	return nil, errors.New("it is empty; make a key with `ralph cluster keygen`")
}

// expandHome replaces a leading ~/ with the home directory.
func expandHome(path string) (string, error) {
	rest, ok := strings.CutPrefix(path, "~/")
	if !ok {
		return path, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return filepath.Join(home, rest), nil
}

// SetupError is a cluster set-up that cannot work or is not safe, with how
// to fix it.
type SetupError struct {
	Err error
	Fix string
}

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }
func (e *SetupError) Hint() string  { return e.Fix }
