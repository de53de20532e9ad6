package bundle

import (
	"runtime"
	"sort"
	"strings"
	"unsafe"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// entry is one file of the archive as Write takes it: its bytes, or, spooled, its compressed
// bytes (learned already).
type entry struct {
	path   string
	data   []byte
	packed *packed
}

// entries is the archive's files in its order: the index, then by rank and path (ordered).
func entries(index []byte, files []artifact.File, spooled []Spooled) []entry {
	out := make([]entry, 0, 1+len(files)+len(spooled))
	for _, f := range files {
		out = append(out, entry{path: f.Path, data: f.Data})
	}
	for _, f := range spooled {
		out = append(out, entry{path: f.Path, packed: &f.packed})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if ri, rj := rank(out[i].path), rank(out[j].path); ri != rj {
			return ri < rj
		}
		return out[i].path < out[j].path
	})
	return append([]entry{{path: IndexName, data: index}}, out...)
}

// ahead is how many files the redactors may finish before the writer takes them: enough to keep
// every core busy, few enough that the files waiting stay a few hundred kB.
const ahead = 64

// redacted hands write each entry, in order, through the redactor's known values and shapes
// (Known: what gitleaks finds was learned before), redacted on every core while one writer
// writes. It stops at write's first error.
func redacted(all []entry, r *redact.Redactor, write func(path string, data []byte) error) error {
	done := make(chan struct{})
	defer close(done)
	out := make([]chan []byte, len(all))
	for i := range out {
		out[i] = make(chan []byte, 1)
	}
	window := make(chan struct{}, ahead)
	workers := make(chan struct{}, runtime.GOMAXPROCS(0))
	go func() {
		for i := range all {
			select {
			case window <- struct{}{}:
			case <-done:
				return
			}
			workers <- struct{}{}
			go func() {
				defer func() { <-workers }()
				data := all[i].data
				if all[i].packed != nil {
					data = all[i].packed.unpack()
				}
				// Read and written in place: nothing changes data, and the writer only copies
				// what it is handed into the archive.
				text := unsafe.String(unsafe.SliceData(data), len(data))
				if isJSON(all[i].path) {
					text = r.KnownJSON(text)
				} else {
					text = r.Known(text)
				}
				out[i] <- unsafe.Slice(unsafe.StringData(text), len(text))
			}()
		}
	}()
	for i := range all {
		data := <-out[i]
		<-window
		if err := write(all[i].path, data); err != nil {
			return err
		}
	}
	return nil
}

// isJSON says whether the file at path is a JSON document (the objects, doctor.json, Ray's
// answers), which the redactor must leave JSON.
func isJSON(path string) bool { return strings.HasSuffix(path, ".json") }
