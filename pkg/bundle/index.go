package bundle

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	"github.com/kubectl-ray/kubectl-ray/pkg/version"
)

// IndexName is the index page, the archive's first file. Markdown: it is read in a terminal as
// plain text as easily as a .txt, and a maintainer who gets the bundle attached to an issue sees
// its tables rendered by the forge.
const IndexName = "index.md"

// Header says what was bundled, for the index.
type Header struct {
	Made          time.Time
	Namespace     string // "" with AllNamespaces
	AllNamespaces bool
	Target        string // "" for every RayCluster
	Selector      string
	NoLogs        bool
	NoRayLogs     bool
	Limits        artifact.LogLimits
}

// Index renders the index page: what the bundle holds, what could not be collected and why, and
// how it was redacted.
func Index(h Header, c Contents) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# kubectl ray bundle\n\n")
	fmt.Fprintf(&b, "Made %s by kubectl-ray %s, of %s.\n\n", h.Made.UTC().Format(time.RFC3339), version.Version, h.scope())
	if len(c.Gaps) == 0 {
		b.WriteString("## Not collected\n\nNothing: every read succeeded.\n\n")
	} else {
		fmt.Fprintf(&b, "## Not collected\n\n%s; the rest of the bundle is complete without them.\n\n", readsFailed(len(c.Gaps)))
		for _, g := range c.Gaps {
			fmt.Fprintf(&b, "- %s: %s\n", g.What, oneLine(g.Reason))
		}
		b.WriteString("\n")
	}
	if h.NoLogs {
		b.WriteString("Container logs were left out (--no-logs).\n\n")
	} else {
		fmt.Fprintf(&b, "Container logs: %s.\n\n", h.Limits.Describe())
		if h.NoRayLogs {
			b.WriteString("Ray's log files were left out (--no-ray-logs).\n\n")
		} else {
			b.WriteString("Ray's log files: each running head's " + RayLogsDir + ", through one exec of tar, under ray-logs/.\n\n")
		}
	}
	b.WriteString("## Inside\n\n| file | what |\n|---|---|\n")
	for _, f := range ordered(c.listed()) {
		fmt.Fprintf(&b, "| %s | %s |\n", f.Path, strings.ReplaceAll(f.About, "|", `\|`))
	}
	b.WriteString("\n## Redaction\n\n" + redactionNote)
	return []byte(b.String())
}

const redactionNote = `Every file was redacted before it was written, by structure, by shape and by value: the
values of env variables, start parameters and fields whose names sound secret, the Redis password
of GCS fault tolerance, the names of the Secrets that objects refer to, secret flags of command
lines (a flag and its value in two list elements too), the secrets of runtime_env and serveConfigV2
(parsed), credentials in URLs, Authorization headers, connection strings, private keys and the
provider key formats gitleaks knows, each replaced by [redacted]; and every such value is replaced
wherever else it appears (annotations, logs, Events, doctor's report). A field that could not be
parsed is redacted whole (listed above). Secrets themselves are never read. A secret in no known
shape, under no secret name, that no spec reveals cannot be recognised.
`

// readsFailed says how many reads failed, in words.
func readsFailed(n int) string {
	if n == 1 {
		return "1 read failed"
	}
	return fmt.Sprintf("%d reads failed", n)
}

// listed is every file of c, without the bytes of the spooled ones: what the index lists.
func (c Contents) listed() []artifact.File {
	out := append(make([]artifact.File, 0, len(c.Files)+len(c.Spooled)), c.Files...)
	for _, f := range c.Spooled {
		out = append(out, artifact.File{Path: f.Path, About: f.About})
	}
	return out
}

// ordered is the files in the archive's order (and the index's): by rank, then path.
func ordered(files []artifact.File) []artifact.File {
	out := append([]artifact.File(nil), files...)
	sort.SliceStable(out, func(i, j int) bool {
		if ri, rj := rank(out[i].Path), rank(out[j].Path); ri != rj {
			return ri < rj
		}
		return out[i].Path < out[j].Path
	})
	return out
}

// rank orders the index's files: the summaries first, then the objects, nodes, the operator and
// the logs, each group in path order (Render's order within a group).
func rank(path string) int {
	switch {
	case strings.HasPrefix(path, "doctor"):
		return 0
	case path == "versions.yaml":
		return 1
	case strings.HasPrefix(path, "namespaces/"):
		return 2
	case strings.HasPrefix(path, "nodes/"):
		return 3
	case strings.HasPrefix(path, "operator/"):
		return 4
	}
	return 5
}

func (h Header) scope() string {
	what := "every RayCluster"
	if h.Target != "" {
		what = h.Target
	}
	if h.Selector != "" {
		what += " with labels " + h.Selector
	}
	if h.AllNamespaces {
		return what + " in all namespaces"
	}
	return what + " in namespace " + h.Namespace
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
