package bundle

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// RayLogFile is one of Ray's log files from a head, as kept: its path under RayLogsDir, its
// bytes (the end of the file when it was longer than the limit) and what was left out.
type RayLogFile struct {
	Name string
	Data []byte
	// Size is the file's size in the pod; len(Data) < Size when only its end is kept, or when
	// the stream was cut inside it.
	Size int64
	Cut  string // why not all of it is kept, "" when it is whole
}

// UnpackRayLogs reads the regular files of a tar stream (tar cf - -C RayLogsDir .), keeping the
// last keep bytes of each (0: all of it). A stream cut short (truncated: at the exec's limit)
// keeps what it holds of the file it was cut in.
func UnpackRayLogs(stream []byte, truncated bool, keep int64) ([]RayLogFile, error) {
	tr := tar.NewReader(bytes.NewReader(stream))
	var out []RayLogFile
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if truncated && errors.Is(err, io.ErrUnexpectedEOF) {
				break
			}
			return out, fmt.Errorf("reading the tar stream: %v", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		data, err := io.ReadAll(tr)
		f := RayLogFile{Name: name, Size: h.Size}
		if err != nil {
			if !truncated || !errors.Is(err, io.ErrUnexpectedEOF) {
				return out, fmt.Errorf("reading %s from the tar stream: %v", name, err)
			}
			f.Cut = fmt.Sprintf("only its first %d of %d bytes: the read of the log directory stopped at its limit", len(data), h.Size)
		}
		if keep > 0 && int64(len(data)) > keep {
			if f.Cut == "" {
				f.Cut = fmt.Sprintf("only its last %d of %d bytes (--limit-bytes)", keep, h.Size)
			}
			data = data[int64(len(data))-keep:]
		}
		f.Data = data
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
