// Package atomicfile replaces files whole: a reader sees the old content
// or the new, never a part, and concurrent writers never share a
// temporary file.
package atomicfile

import (
	"os"
	"path/filepath"
)

// WriteFile writes data to a new temporary file beside path, gives it
// mode perm and renames it over path. On failure path is unchanged and the
// temporary file is gone.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
