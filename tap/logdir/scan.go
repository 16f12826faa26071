package logdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// glob is filepath.Glob that reports the errors it meets. filepath.Glob
// ignores them (a directory it cannot read has no matches), so a scan that
// ran out of descriptors looked like every file was deleted. Here a
// directory that does not exist (or is not a directory) has no matches; any
// other failure to read one is returned, with the matches found elsewhere.
func glob(pattern string) ([]string, error) {
	if !hasMeta(pattern) {
		if _, err := os.Lstat(pattern); err != nil {
			if missing(err) {
				return nil, nil
			}
			return nil, err
		}
		return []string{pattern}, nil
	}
	dir, file := filepath.Split(pattern)
	dir = cleanDir(dir)
	if !hasMeta(dir) {
		return globDir(dir, file, nil)
	}
	dirs, err := glob(dir)
	var matches []string
	for _, d := range dirs {
		var derr error
		matches, derr = globDir(d, file, matches)
		err = errors.Join(err, derr)
	}
	return matches, err
}

// globDir appends the names in dir that match pattern.
func globDir(dir, pattern string, matches []string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		if missing(err) {
			return matches, nil
		}
		return matches, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return matches, nil
		}
		return matches, err
	}
	slices.Sort(names) // discovery order is read order: make it stable
	for _, n := range names {
		if ok, _ := filepath.Match(pattern, n); ok { // the pattern was checked by Validate
			matches = append(matches, filepath.Join(dir, n))
		}
	}
	return matches, nil
}

// missing reports an error that means "no such file here" (as opposed to
// "could not look").
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func cleanDir(dir string) string {
	switch dir {
	case "":
		return "."
	case string(filepath.Separator):
		return dir
	}
	return dir[:len(dir)-1] // drop the trailing separator
}
