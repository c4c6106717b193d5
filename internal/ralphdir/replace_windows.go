package ralphdir

import (
	"errors"
	"os"
	"path/filepath"
)

// replaceFile is write-then-rename, where renameio does not build.
func replaceFile(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, "."+filepath.Base(name))
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	_, err = f.Write(data)
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}
