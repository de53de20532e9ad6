package manifest

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// Input is what doctor -f names: paths (files, directories, "-" for stdin), as kubectl apply -f
// takes them.
type Input struct {
	Paths []string
	// Recursive walks directories below the ones named (-R); without it only their own files.
	Recursive bool
	// Stdin is read for "-".
	Stdin io.Reader
}

// extensions are the files a directory contributes, as kubectl apply -f takes them.
var extensions = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// FileError is a file that could not be read or does not parse: "file:line: problem". Nothing
// else of that file is checked; the other files still are.
type FileError struct {
	File string
	Line int // 0 when the problem is the file as a whole
	Msg  string
}

func (e *FileError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return e.File + ":" + itoa(e.Line) + ": " + e.Msg
}

// Read reads every document of in. A path that does not exist, or names no file to read, is an
// Invalid error (nothing is checked); a file that does not parse is a FileError in Set.Errors
// and the other files are still read.
func Read(in Input) (*Set, error) {
	if len(in.Paths) == 0 {
		return nil, fault.Errorf(fault.Invalid, "no manifest to check: name a file, a directory or - for stdin")
	}
	files, err := expand(in)
	if err != nil {
		return nil, err
	}
	set := &Set{Skipped: map[string]int{}}
	stdinRead := false
	for _, f := range files {
		var data []byte
		if f == "-" {
			if stdinRead {
				return nil, fault.Errorf(fault.Invalid, "- is named twice: stdin can be read once")
			}
			stdinRead = true
			if in.Stdin == nil {
				return nil, fault.Errorf(fault.Invalid, "- names stdin, and there is none")
			}
			data, err = io.ReadAll(in.Stdin)
		} else {
			data, err = os.ReadFile(f)
		}
		name := f
		if f == "-" {
			name = "<stdin>"
		}
		if err != nil {
			set.Errors = append(set.Errors, &FileError{File: name, Msg: "cannot be read: " + unwrapPath(err)})
			continue
		}
		set.Files++
		docs, ferr := split(name, data)
		if ferr != nil {
			set.Errors = append(set.Errors, ferr)
			continue
		}
		if err := set.addAll(docs); err != nil {
			set.Errors = append(set.Errors, err)
		}
	}
	return set, nil
}

// expand turns the paths into files: a directory gives its .yaml, .yml and .json files, sorted,
// and with Recursive those of the directories below it.
func expand(in Input) ([]string, error) {
	var out []string
	for _, p := range in.Paths {
		if p == "-" {
			out = append(out, p)
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fault.Errorf(fault.Invalid, "%s does not exist: name a file, a directory or - for stdin", p)
			}
			return nil, fault.Errorf(fault.Invalid, "cannot read %s: %s", p, unwrapPath(err))
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != p && !in.Recursive {
					return filepath.SkipDir
				}
				return nil
			}
			if extensions[strings.ToLower(filepath.Ext(path))] {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fault.Errorf(fault.Invalid, "cannot read directory %s: %s", p, unwrapPath(err))
		}
		if len(found) == 0 {
			hint := ""
			if !in.Recursive {
				hint = " (add -R to read the directories below it)"
			}
			return nil, fault.Errorf(fault.Invalid, "directory %s has no .yaml, .yml or .json file%s", p, hint)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// unwrapPath is the reason of a path error without the path, which the caller names already.
func unwrapPath(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
