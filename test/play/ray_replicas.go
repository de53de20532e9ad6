package play

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
)

// PlayServeReplicas: each deployment of an application has one replica, placed by the stand-in
// Serve controller on the workers of its cluster whose stand-ins run (Running, not being deleted),
// round-robin in name order (applications, then deployments), over the first ReplicaWorkers of
// them by name (all when 0), on the head when no worker runs. The dashboard's
// /api/serve/applications/ lists them as Ray's ReplicaDetails do: replica_id, state (RUNNING once
// the app is, STARTING before), node_id (the node table's) and node_ip (the pod's IP). A worker's
// replicas are placed again on the others at the next read after its deletion starts: the play
// replaces them at once, and fails no request for them (docs/sandbox.md says what a real Serve
// does meanwhile).
const PlayServeReplicas = "one replica per deployment, round-robin over the running workers"

// nodeID is the Ray node ID the stand-ins give pod's node (PlayNodeTable, PlayServeReplicas).
func nodeID(pod string) string {
	id := sha256.Sum256([]byte(pod))
	return hex.EncodeToString(id[:28])
}

// replicaHosts is where PlayServeReplicas places replicas in cluster now: the pods, by name.
// Called with r.mu held.
func (r *Ray) replicaHosts(cluster string) []*rayNode {
	var workers, heads []*rayNode
	for _, n := range r.nodes {
		if n.cluster != cluster || len(n.servers) == 0 {
			continue
		}
		if n.head {
			heads = append(heads, n)
		} else {
			workers = append(workers, n)
		}
	}
	hosts := workers
	if len(hosts) == 0 {
		hosts = heads
	}
	sort.Slice(hosts, func(i, j int) bool { return hosts[i].pod < hosts[j].pod })
	if k := r.opts.ReplicaWorkers; k > 0 && len(workers) > k {
		hosts = hosts[:k]
	}
	return hosts
}

// replica is one replica PlayServeReplicas places: its pod, and its ReplicaDetails.
type replica struct {
	pod     string
	details map[string]any
}

// placeReplicas is, per "app/deployment", the replica PlayServeReplicas lists, in the state
// state gives its application. Called with r.mu held.
func (r *Ray) placeReplicas(cluster string, apps map[string]*serveApp, state func(app string) string) map[string]replica {
	hosts := r.replicaHosts(cluster)
	out := map[string]replica{}
	if len(hosts) == 0 {
		return out
	}
	var names []string
	for name := range apps {
		names = append(names, name)
	}
	sort.Strings(names)
	i := 0
	for _, name := range names {
		deps := append([]string(nil), apps[name].Deployments...)
		sort.Strings(deps)
		for _, d := range deps {
			n := hosts[i%len(hosts)]
			i++
			id := nodeID(n.pod + "/" + name + "/" + d)[:8]
			out[name+"/"+d] = replica{pod: n.pod, details: map[string]any{"replica_id": id, "state": state(name), "node_id": nodeID(n.pod),
				"node_ip": n.ip, "actor_name": "SERVE_REPLICA::" + name + "#" + d + "#" + id}}
		}
	}
	return out
}

// ReplicaPods is which pods of cluster host a Serve replica now (PlayServeReplicas), by name.
func (r *Ray) ReplicaPods(cluster string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.clusters[cluster]
	if c == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, rep := range r.placeReplicas(cluster, c.apps, func(string) string { return "RUNNING" }) {
		if !seen[rep.pod] {
			seen[rep.pod] = true
			out = append(out, rep.pod)
		}
	}
	sort.Strings(out)
	return out
}
