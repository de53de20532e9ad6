package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayfake "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned/fake"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

// Every kubectl ray command line a remedy of doctor prints runs: its subcommand exists and its
// flags parse against the real tree. Doctor runs over each rule fixture of pkg/diagnose (laid over
// its healthy cluster, as diagnose's tests lay them) and each scene of doctor's own tests.
func TestRemediesParse(t *testing.T) {
	remedies := map[string]bool{}
	healthy := readScene(t, filepath.Join("..", "diagnose", "testdata", "healthy.yaml"))
	fixtures, _ := filepath.Glob(filepath.Join("..", "diagnose", "testdata", "rules", "*.yaml"))
	for _, path := range fixtures {
		for _, r := range doctorRemedies(t, overlay(healthy, readScene(t, path), deletions(t, path))) {
			remedies[r] = true
		}
	}
	scenes, _ := filepath.Glob(filepath.Join("doctor", "testdata", "*.yaml"))
	for _, path := range scenes {
		for _, r := range doctorRemedies(t, readScene(t, path)) {
			remedies[r] = true
		}
	}
	root := NewRootCmd(cmdutil.NewFactory(genericclioptions.NewConfigFlags(true), genericiooptions.IOStreams{}))
	var lines []string
	for r := range remedies {
		for _, line := range commandLines(r) {
			lines = append(lines, line)
			if err := parses(root, line); err != nil {
				t.Errorf("remedy %q: kubectl ray %s: %v", r, line, err)
			}
		}
	}
	t.Logf("%d remedies, %d command lines", len(remedies), len(lines))
	// The fixtures reach the remedies that name heal's and doctor's own flags.
	for _, want := range []string{"heal raycluster-a -n ml --stale-workers", "--remove-gcs-ft-finalizer"} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, want) }) {
			t.Errorf("no remedy runs %q; lines: %q", want, lines)
		}
	}
}

var commandStart = regexp.MustCompile("`?kubectl ray ")

// commandLines are the kubectl ray command lines in a remedy, without "kubectl ray": up to the
// closing backquote of a quoted one, else up to the punctuation that ends the clause.
func commandLines(remedy string) []string {
	var out []string
	for _, loc := range commandStart.FindAllStringIndex(remedy, -1) {
		rest := remedy[loc[1]:]
		end := "`"
		if remedy[loc[0]] != '`' {
			end = ";,)`"
		}
		if i := strings.IndexAny(rest, end); i >= 0 {
			rest = rest[:i]
		}
		out = append(out, strings.TrimSuffix(strings.TrimSpace(rest), "."))
	}
	return out
}

// parses finds line's subcommand in the tree and parses its flags. The words after the arguments
// the command takes are the remedy's prose, and are left out.
func parses(root *cobra.Command, line string) error {
	c, rest, err := root.Find(strings.Fields(line))
	if err != nil {
		return err
	}
	if c == root {
		return errors.New("names no subcommand")
	}
	var kept, positional []string
	for i := 0; i < len(rest); i++ {
		tok := rest[i]
		if strings.HasPrefix(tok, "-") {
			kept = append(kept, tok)
			name := strings.TrimLeft(tok, "-")
			fl := c.Flags().Lookup(name)
			if len(name) == 1 {
				fl = c.Flags().ShorthandLookup(name)
			}
			if fl == nil {
				fl = c.InheritedFlags().Lookup(name)
			}
			if fl == nil && len(name) == 1 {
				fl = c.InheritedFlags().ShorthandLookup(name)
			}
			if fl != nil && fl.NoOptDefVal == "" && !strings.Contains(tok, "=") && i+1 < len(rest) {
				i++
				kept = append(kept, rest[i])
			}
			continue
		}
		if c.Args != nil && c.Args(c, append(positional, tok)) != nil {
			break // prose
		}
		positional = append(positional, tok)
		kept = append(kept, tok)
	}
	return c.ParseFlags(kept)
}

// doctorRemedies runs doctor -A -o json over objs and returns the remedies it printed.
func doctorRemedies(t *testing.T, objs []runtime.Object) []string {
	t.Helper()
	var core, ray []runtime.Object
	for _, o := range objs {
		if o.GetObjectKind().GroupVersionKind().Group == rayv1.GroupVersion.Group {
			ray = append(ray, o)
		} else {
			core = append(core, o)
		}
	}
	kc, rc := kfake.NewClientset(core...), rayfake.NewSimpleClientset(ray...)
	var out bytes.Buffer
	f := cmdutil.NewFactory(genericclioptions.NewConfigFlags(true), genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &bytes.Buffer{}})
	f.Now = func() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) }
	f.NewClients = func(*genericclioptions.ConfigFlags) (*kube.Clients, error) {
		return &kube.Clients{Kube: kc, Ray: rc}, nil
	}
	root := NewRootCmd(f)
	root.SetArgs([]string{"doctor", "-A", "-o", "json", "--risks", "--fail-on", "never"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Findings []struct {
			Remedy string `json:"remedy"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var remedies []string
	for _, f := range doc.Findings {
		remedies = append(remedies, f.Remedy)
	}
	return remedies
}

var decode = func() runtime.Decoder {
	sch := runtime.NewScheme()
	_ = scheme.AddToScheme(sch)
	_ = rayv1.AddToScheme(sch)
	return serializer.NewCodecFactory(sch).UniversalDeserializer()
}()

// readScene decodes the objects of a multi-document YAML file; documents of other kinds (an
// accept file) are skipped.
func readScene(t *testing.T, path string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []runtime.Object
	for _, doc := range strings.Split(string(data), "\n---\n") {
		if o, _, err := decode.Decode([]byte(doc), nil, nil); err == nil {
			objs = append(objs, o)
		}
	}
	return objs
}

// deletions are a fixture's "# delete: Kind ns/name" directives.
func deletions(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "# delete: "); ok {
			out[strings.TrimSpace(v)] = true
		}
	}
	return out
}

// overlay is base with over's objects replacing those of the same kind, namespace and name, and
// the deleted ones gone.
func overlay(base, over []runtime.Object, deleted map[string]bool) []runtime.Object {
	id := func(o runtime.Object) string {
		m, _ := meta.Accessor(o)
		return o.GetObjectKind().GroupVersionKind().Kind + " " + m.GetNamespace() + "/" + m.GetName()
	}
	replaced := map[string]bool{}
	for _, o := range over {
		replaced[id(o)] = true
	}
	var out []runtime.Object
	for _, o := range base {
		if !replaced[id(o)] && !deleted[id(o)] {
			out = append(out, o.DeepCopyObject())
		}
	}
	return append(out, over...)
}
