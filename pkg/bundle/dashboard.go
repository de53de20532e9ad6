package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/artifact"
	"github.com/kubectl-ray/kubectl-ray/pkg/rayapi"
	"github.com/kubectl-ray/kubectl-ray/pkg/redact"
)

// Ray's view, kept: the answers of each head's dashboard to the reads doctor --ray
// makes, saved as they came under ray/NS/CLUSTER/, one file per answer, redacted like every
// other byte (Ray's job table repeats each job's runtime_env, env_vars included). dashboard.yaml
// says which answer is which; doctor --from replays them through rayapi.Replay, the same decoders
// doctor's live reads go through, so its findings about Ray are those of the run that kept them.

// DashboardDir is where a cluster's dashboard answers go.
func DashboardDir(namespace, cluster string) string { return "ray/" + namespace + "/" + cluster }

const dashboardIndex = "dashboard.yaml"

// dashboardDoc is dashboard.yaml: whose dashboard, through which head, and each read in the
// order it was made; Unreachable is why nothing (or not all) could be read, as doctor said it.
type dashboardDoc struct {
	Namespace   string              `json:"namespace"`
	Cluster     string              `json:"cluster"`
	Head        string              `json:"head,omitempty"`
	Port        int                 `json:"port,omitempty"`
	Unreachable *rayapi.Unreachable `json:"unreachable,omitempty"`
	Auth        *authDoc            `json:"auth,omitempty"`
	Answers     []answerDoc         `json:"answers,omitempty"`
}

// authDoc is how the head's Ray asked for a token (Mode) and where it was read (From: the Secret
// and key, never the token), which ray-dashboard-auth's finding names. Its keys are plain words:
// the redactor blanks values under secret-sounding keys, as it must in a pod's env.
type authDoc struct {
	Mode string `json:"mode"`
	From string `json:"from,omitempty"`
}

type answerDoc struct {
	Path        string              `json:"path"`
	Code        int                 `json:"code,omitempty"`
	File        string              `json:"file,omitempty"`
	Unreachable *rayapi.Unreachable `json:"unreachable,omitempty"`
}

// dashboardFiles are the files of one cluster's dashboard view: its answers' bodies (JSON
// redacted by its structure first, then indented for a reader) and dashboard.yaml.
func dashboardFiles(v *rayapi.View, found redact.Set) []artifact.File {
	dir := DashboardDir(v.Namespace, v.Cluster)
	doc := dashboardDoc{Namespace: v.Namespace, Cluster: v.Cluster, Head: v.Head, Port: v.Port, Unreachable: v.Unreachable}
	if v.Auth != "" {
		doc.Auth = &authDoc{Mode: v.Auth, From: v.TokenFrom}
	}
	var files []artifact.File
	for _, a := range v.Answers {
		ad := answerDoc{Path: a.Path, Code: a.Code, Unreachable: a.Unreachable}
		if a.Unreachable == nil {
			body, ext := answerBody(a.Body, found)
			ad.File = answerName(a.Path) + ext
			files = append(files, artifact.File{Path: dir + "/" + ad.File, About: fmt.Sprintf("Ray's dashboard: GET %s, HTTP %d, as it answered", a.Path, a.Code), Data: body})
		}
		doc.Answers = append(doc.Answers, ad)
	}
	about := "Ray's dashboard read through head " + v.Head + ": which file answers which read"
	if v.Unreachable != nil {
		about = "Ray's dashboard could not be read: " + string(v.Unreachable.Reason)
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		out = []byte(fmt.Sprintf("# cannot render the dashboard's index: %v\n", err))
	}
	return append([]artifact.File{{Path: dir + "/" + dashboardIndex, About: about, Data: out}}, files...)
}

// answerName is a file name for a dashboard path: /api/v0/nodes?limit=... is v0-nodes.
func answerName(p string) string {
	p, _, _ = strings.Cut(p, "?")
	p = strings.Trim(strings.TrimPrefix(p, "/api/"), "/")
	if p == "" {
		return "root"
	}
	return strings.ReplaceAll(p, "/", "-")
}

// answerBody redacts a JSON body by its structure (as an object's YAML is) and indents it; any
// other body is kept as it came, for the text pass.
func answerBody(body []byte, found redact.Set) ([]byte, string) {
	t := bytes.TrimSpace(body)
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') || !json.Valid(t) {
		found.AddText(string(body))
		return body, ".txt"
	}
	red := redact.JSON(string(t), found)
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(red), "", "  "); err != nil {
		return []byte(red), ".json"
	}
	out.WriteByte('\n')
	return out.Bytes(), ".json"
}

// readDashboards rebuilds the Ray views of a bundle from its ray/ files (rel path to data).
func readDashboards(files map[string][]byte) ([]rayapi.View, error) {
	var indexes []string
	for rel := range files {
		if path.Base(rel) == dashboardIndex {
			indexes = append(indexes, rel)
		}
	}
	sort.Strings(indexes)
	views := make([]rayapi.View, 0, len(indexes))
	for _, rel := range indexes {
		var doc dashboardDoc
		if err := yaml.Unmarshal(files[rel], &doc); err != nil {
			return nil, fmt.Errorf("%s: %v", rel, err)
		}
		answers := make([]rayapi.Answer, 0, len(doc.Answers))
		for _, a := range doc.Answers {
			ans := rayapi.Answer{Path: a.Path, Code: a.Code, Unreachable: a.Unreachable}
			if a.File != "" {
				body, ok := files[path.Dir(rel)+"/"+a.File]
				if !ok {
					return nil, fmt.Errorf("%s names %s, which is not in the bundle", rel, a.File)
				}
				ans.Body = body
			}
			answers = append(answers, ans)
		}
		v := rayapi.View{Namespace: doc.Namespace, Cluster: doc.Cluster, Head: doc.Head, Port: doc.Port}
		if doc.Auth != nil {
			v.Auth, v.TokenFrom = doc.Auth.Mode, doc.Auth.From
		}
		rayapi.Replay(&v, answers)
		if doc.Unreachable != nil {
			v.Unreachable = doc.Unreachable // as doctor worded it (the port-forward's side included)
		}
		views = append(views, v)
	}
	return views, nil
}
