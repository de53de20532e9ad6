package accept

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// EnvVar lists accept files (separated like PATH) when no --accept flag is given.
const EnvVar = "KUBECTL_RAY_ACCEPT"

// DefaultFile is read from the working directory when neither --accept nor $KUBECTL_RAY_ACCEPT
// names a file, and only if it exists: it lives in the repository of the job that runs doctor,
// next to the workflow, and changes to it are reviewed like code.
const DefaultFile = ".kubectl-ray-accept.yaml"

// Source is how the files were found, for error messages.
type Source string

const (
	FromFlag    Source = "--accept"
	FromEnv     Source = "$" + EnvVar
	FromDefault Source = DefaultFile
	FromNone    Source = ""
)

// Locate picks the accept files as kubectl picks kubeconfigs: the flags, else the environment
// variable, else the default file if it exists.
func Locate(flags []string, getenv func(string) string, exists func(string) bool) ([]string, Source) {
	if len(flags) > 0 {
		return flags, FromFlag
	}
	if v := getenv(EnvVar); v != "" {
		var files []string
		for _, f := range filepath.SplitList(v) {
			if f != "" {
				files = append(files, f)
			}
		}
		if len(files) > 0 {
			return files, FromEnv
		}
	}
	if exists(DefaultFile) {
		return []string{DefaultFile}, FromDefault
	}
	return nil, FromNone
}

// Load reads and merges files in order. Every problem is a *ParseError naming file and line.
func Load(files []string, from Source, readFile func(string) ([]byte, error)) (*Set, error) {
	all := &Set{Thresholds: map[string]Threshold{}}
	for _, name := range files {
		data, err := readFile(name)
		if err != nil {
			why := err.Error()
			if errors.Is(err, fs.ErrNotExist) {
				why = "no such file"
			}
			return nil, &ParseError{Pos: Pos{File: name}, Msg: "cannot read the accept file named by " + string(from) + ": " +
				strings.TrimPrefix(why, "open "+name+": ") + "; check the path"}
		}
		s, err := Parse(name, data)
		if err != nil {
			return nil, err
		}
		for key, t := range s.Thresholds {
			if prev, dup := all.Thresholds[key]; dup {
				return nil, &ParseError{Pos: t.Pos, Msg: "thresholds." + key + " is also set at " + prev.Pos.String() + "; set it in one file"}
			}
			all.Thresholds[key] = t
		}
		all.Files = append(all.Files, name)
		all.Entries = append(all.Entries, s.Entries...)
	}
	return all, nil
}
