package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ray/kubectl-ray/pkg/diagnose"
	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
	"github.com/kubectl-ray/kubectl-ray/pkg/ray"
	"github.com/kubectl-ray/kubectl-ray/pkg/state"
)

// SetFrom is the setting that names a bundle to read (doctor --from).
const SetFrom fault.Field = "from"

// Made is what a bundle says of its own making, from its doctor.json: when its snapshot was taken,
// of what, and what that snapshot could not see.
type Made struct {
	Now       time.Time
	Namespace string // "" for all namespaces
	Selector  string
	Target    string // "" for every RayCluster; else NAME or kind/NAME
	Blind     []state.Gap
}

// ReadSnapshot rebuilds from a bundle the snapshot doctor's report in it was made from: the same
// objects, the same Events (those doctor's field selectors and page filters keep), Ray's view
// where the bundle read the dashboards (replayed from their answers), the time it was taken and
// what it could not see. The objects are redacted; no rule reads a secret value.
func ReadSnapshot(file string) (*state.Snapshot, Made, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, Made{}, fault.Errorf(fault.Invalid, "cannot read the bundle %s: %v; name an archive kubectl ray bundle wrote (%s FILE.tar.gz)", file, rootErr(err), SetFrom)
	}
	defer f.Close()
	s := &state.Snapshot{}
	var made Made
	sawDoctor := false
	dashboards := map[string][]byte{}
	bad := func(name string, err error) error {
		return fault.Errorf(fault.Invalid, "%s is not a bundle kubectl ray bundle wrote: %s: %v", file, name, err)
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, Made{}, bad("gzip", err)
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, Made{}, bad("tar", err)
		}
		_, rel, ok := strings.Cut(hdr.Name, "/")
		if !ok || hdr.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, Made{}, bad(hdr.Name, err)
		}
		if rel == "doctor.json" {
			if made, err = readMade(data); err != nil {
				return nil, Made{}, bad(hdr.Name, err)
			}
			sawDoctor = true
			continue
		}
		if strings.HasPrefix(rel, "ray/") {
			dashboards[rel] = data
			continue
		}
		if err := addFile(s, rel, data); err != nil {
			return nil, Made{}, bad(hdr.Name, err)
		}
	}
	if !sawDoctor {
		return nil, Made{}, bad("doctor.json", errors.New("missing"))
	}
	if s.Ray, err = readDashboards(dashboards); err != nil {
		return nil, Made{}, bad("ray/", err)
	}
	s.RayAsked = len(s.Ray) > 0
	s.Now, s.Blind, s.ClustersSelected = made.Now, made.Blind, made.Selector != ""
	return s, made, nil
}

func rootErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readMade reads doctor.json's metadata and blind list.
func readMade(data []byte) (Made, error) {
	var doc struct {
		Metadata struct {
			GeneratedAt time.Time `json:"generatedAt"`
			Namespace   string    `json:"namespace"`
			Selector    string    `json:"selector"`
			Target      string    `json:"target"`
		} `json:"metadata"`
		Blind []state.Gap `json:"blind"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return Made{}, err
	}
	m := doc.Metadata
	return Made{Now: m.GeneratedAt, Namespace: m.Namespace, Selector: m.Selector, Target: m.Target, Blind: doc.Blind}, nil
}

// doctorEvents and doctorWarnings are doctor's field selectors of its two Event LISTs, matched
// here as the API server matches them.
var (
	doctorEvents   = fields.ParseSelectorOrDie(ray.EventFieldSelector)
	doctorWarnings = fields.ParseSelectorOrDie(ray.WarningFieldSelector)
)

func eventFields(e *corev1.Event) fields.Set {
	return fields.Set{"involvedObject.kind": e.InvolvedObject.Kind, "involvedObject.apiVersion": e.InvolvedObject.APIVersion,
		"reason": e.Reason, "type": e.Type}
}

// addFile puts one file of the bundle where doctor's snapshot holds it: the kinds doctor lists,
// selected as its LISTs select them (pods by their Ray label or their Job's, Services and slices
// by the serve label, Jobs by the Redis cleanup label, Events by doctor's field selectors and
// page filters). Logs, the index and the rest are not part of the snapshot. Objects are JSON
// (NAME.json); bundles written before were YAML (NAME.yaml), and are read as well.
func addFile(s *state.Snapshot, rel string, data []byte) error {
	dir, base := path.Split(rel)
	ext := path.Ext(base)
	if ext != ".json" && ext != ".yaml" {
		return nil
	}
	f := objectFile{data: data, json: ext == ".json"}
	stem := strings.TrimSuffix(base, ext)
	parts := strings.Split(strings.TrimSuffix(dir, "/"), "/")
	switch {
	case dir == "" && base == "versions.yaml":
		var v Versions
		if err := yaml.Unmarshal(data, &v); err != nil {
			return err
		}
		s.NoGatewayAPI = v.GatewayAPI == "absent"
		return nil
	case len(parts) == 1 && parts[0] == "nodes":
		return decodeInto(f, &s.Nodes)
	case len(parts) == 2 && parts[0] == "operator" && strings.HasPrefix(stem, "deployment-"):
		return decodeInto(f, &s.Deployments)
	case len(parts) == 2 && parts[0] == "namespaces" && stem == "events":
		var list struct {
			Items []corev1.Event `json:"items"`
		}
		if err := f.decode(&list); err != nil {
			return err
		}
		for i := range list.Items {
			e := &list.Items[i]
			if doctorEvents.Matches(eventFields(e)) && diagnose.KeepEvent(e) || doctorWarnings.Matches(eventFields(e)) && diagnose.KeepWarning(e) {
				state.TrimEvent(e)
				s.Events = append(s.Events, *e)
			}
		}
		return nil
	case len(parts) != 3 || parts[0] != "namespaces":
		return nil
	}
	switch parts[2] {
	case "rayclusters":
		return decodeInto(f, &s.Clusters)
	case "rayservices":
		return decodeInto(f, &s.Services)
	case "raycronjobs":
		return decodeInto(f, &s.CronJobs)
	case "gateways":
		return decodeInto(f, &s.Gateways)
	case "httproutes":
		return decodeInto(f, &s.HTTPRoutes)
	case "rayjobs":
		raw, err := f.asJSON()
		if err != nil || raw == nil {
			return err
		}
		if err := decodeInto(objectFile{data: raw, json: true}, &s.Jobs); err != nil {
			return err
		}
		// What its type drops of a newer release's RayJob, the bundle kept (renderer.rayJob).
		j := &s.Jobs[len(s.Jobs)-1]
		if n, err := ray.RayJobNewerOf(raw); err == nil && !n.IsZero() { // left unread when it does not decode, as live
			if s.JobsNewer == nil {
				s.JobsNewer = map[string]ray.RayJobNewer{}
			}
			s.JobsNewer[j.Namespace+"/"+j.Name] = n
		}
	case "pods":
		var p corev1.Pod
		if err := f.decode(&p); err != nil {
			return err
		}
		switch {
		case p.Labels[ray.LabelIsRayNode] == "yes":
			s.Pods = append(s.Pods, p)
		case p.Labels[jobNameLabel] != "":
			s.SubmitterPods = append(s.SubmitterPods, p)
		}
	case "services":
		var sv corev1.Service
		if err := f.decode(&sv); err != nil {
			return err
		}
		if _, ok := sv.Labels[ray.LabelServe]; ok {
			s.Serve = append(s.Serve, sv)
		}
	case "endpointslices":
		var e discoveryv1.EndpointSlice
		if err := f.decode(&e); err != nil {
			return err
		}
		if _, ok := e.Labels[ray.LabelServe]; ok {
			s.ServeEndpoints = append(s.ServeEndpoints, e)
		}
	case "poddisruptionbudgets":
		return decodeInto(f, &s.PDBs)
	case "networkpolicies":
		return decodeInto(f, &s.NetworkPolicies)
	case "jobs":
		var j batchv1.Job
		if err := f.decode(&j); err != nil {
			return err
		}
		if j.Labels[ray.LabelNodeType] == ray.NodeTypeRedisCleanup {
			s.CleanupJobs = append(s.CleanupJobs, j)
		}
	}
	return nil
}

// objectFile is one object's file: JSON, or YAML in a bundle written before objects were JSON.
type objectFile struct {
	data []byte
	json bool
}

// asJSON is the file's object as JSON; nil when it holds none: an object the bundle could not
// render is written as a note of why (artifact's {"error": ...}, or a YAML comment before).
func (f objectFile) asJSON() ([]byte, error) {
	if bytes.HasPrefix(f.data, []byte(`{"error":`)) || bytes.HasPrefix(f.data, []byte("#")) {
		return nil, nil
	}
	if f.json {
		return f.data, nil
	}
	return yaml.YAMLToJSON(f.data)
}

// decode reads the file's object into v, which is left as it is when the file holds none.
func (f objectFile) decode(v any) error {
	raw, err := f.asJSON()
	if err != nil || raw == nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// decodeInto appends the file's object to *list, when it holds one.
func decodeInto[T any](f objectFile, list *[]T) error {
	raw, err := f.asJSON()
	if err != nil || raw == nil {
		return err
	}
	var o T
	if err := json.Unmarshal(raw, &o); err != nil {
		return err
	}
	*list = append(*list, o)
	return nil
}
