package evidence

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
)

// Files are the evidence as files, relative to the pod's directory: index.md (what heal did and
// why, what is here, what could not be read), pod.yaml, events.txt and logs/NAME.log.
func (ev Evidence) Files() []artifact.File {
	content := ev.content()
	return append([]artifact.File{{Path: "index.md", Data: ev.index(content)}}, content...)
}

// content is every file but the index, which lists them.
func (ev Evidence) content() []artifact.File {
	files := []artifact.File{
		{Path: "pod.yaml", About: "the pod as heal last read it, before the delete", Data: ev.PodYAML},
		{Path: "events.txt", About: "the Events about the pod, oldest first", Data: artifact.EventTable(ev.Events)},
	}
	for _, l := range ev.Logs {
		files = append(files, artifact.File{Path: "logs/" + l.Name(), About: l.about(), Data: l.Data})
	}
	return files
}

func (l Log) about() string {
	what := "container " + l.Container
	if l.Init {
		what = "init container " + l.Container
	}
	if l.Previous {
		return "the log of " + what + " before its last restart"
	}
	return "the log of " + what
}

func (ev Evidence) index(content []artifact.File) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Evidence of pod %s/%s (uid %s)\n\n", ev.Pod.Namespace, ev.Pod.Name, ev.Pod.UID)
	fmt.Fprintf(&b, "Kept by kubectl ray heal at %s, just before it deleted the pod under rule %s",
		ev.Taken.UTC().Format(time.RFC3339), ev.Rule)
	if ev.Cluster.Name != "" {
		fmt.Fprintf(&b, " of RayCluster %s/%s", ev.Cluster.Namespace, ev.Cluster.Name)
	}
	fmt.Fprintf(&b, ": %s.\nSecret values are redacted.\n\n| file | what |\n|---|---|\n", ev.Why)
	for _, f := range content {
		fmt.Fprintf(&b, "| %s | %s |\n", f.Path, f.About)
	}
	if len(ev.Gaps) > 0 {
		b.WriteString("\n## Not kept\n\n")
		for _, g := range ev.Gaps {
			fmt.Fprintf(&b, "- %s: %s\n", g.What, strings.ReplaceAll(g.Reason, "\n", " "))
		}
	}
	return []byte(b.String())
}

// Dir is where a pod's evidence goes under root: NAMESPACE/POD-UID8, so a pod of the same name
// created later (a new head) gets a directory of its own.
func (ev Evidence) Dir(root string) string {
	uid := string(ev.Pod.UID)
	if len(uid) > 8 {
		uid = uid[:8]
	}
	return filepath.Join(root, ev.Pod.Namespace, ev.Pod.Name+"-"+uid)
}

// WriteDir writes the evidence under root and returns its directory. The files are written into
// a temporary directory beside it, then renamed: a full disk leaves no half-kept evidence under
// the final name. Evidence already there (the same pod kept again, after a re-read) is replaced.
func WriteDir(root string, ev Evidence) (string, error) {
	dir := ev.Dir(root)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("cannot create evidence directory %s: %w", parent, unwrapPath(err))
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+"-*")
	if err != nil {
		return "", fmt.Errorf("cannot write evidence under %s: %w", parent, unwrapPath(err))
	}
	for _, f := range ev.Files() {
		p := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			err = os.WriteFile(p, f.Data, 0o600)
		}
		if err != nil {
			_ = os.RemoveAll(tmp)
			return "", fmt.Errorf("cannot write evidence file %s: %w", filepath.Join(dir, f.Path), unwrapPath(err))
		}
	}
	_ = os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.RemoveAll(tmp)
		return "", fmt.Errorf("cannot write evidence directory %s: %w", dir, unwrapPath(err))
	}
	return dir, nil
}

// unwrapPath drops the path an *os.PathError repeats: the message names it once already.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	if le, ok := err.(*os.LinkError); ok {
		return le.Err
	}
	return err
}
