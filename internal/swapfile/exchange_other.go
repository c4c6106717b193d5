//go:build !linux && !darwin

package swapfile

import "errors"

var errNoExchange = errors.New("no atomic exchange of files on this system")

func exchange(string, string) error { return errNoExchange }

func unsupported(err error) bool { return errors.Is(err, errNoExchange) }
