package probe

import (
	"math/rand/v2"
	"slices"
	"sync"
)

// Target is where one request goes: BaseURL (scheme://host:port, no path) and Name, the endpoint
// that will serve it (a pod name behind a port-forward, or the URL's host for a plain URL).
type Target struct {
	Name    string
	BaseURL string
}

// Endpoints yields the target of each request. Pick is called once per request, in schedule
// order, from one goroutine; ok=false means there is no endpoint right now and the request is
// recorded as ClassNoEndpoint without being sent.
type Endpoints interface {
	Pick(seq uint64) (t Target, ok bool)
}

// URL is a single fixed target, e.g. --target http://host:8000. The probe's HTTP client keeps
// connections alive, so a Service URL reached through kube-proxy sticks to the pods its
// connections landed on, and a host name is resolved only when a new connection is dialed.
type URL struct{ T Target }

// NewURL names the endpoint after the URL's host so the report has something to show.
func NewURL(name, baseURL string) URL { return URL{T: Target{Name: name, BaseURL: baseURL}} }

func (u URL) Pick(uint64) (Target, bool) { return u.T, true }

// Policy chooses how a Set spreads requests.
type Policy int

const (
	// RoundRobin is kube-proxy's IPVS default and makes per-endpoint counts predictable.
	RoundRobin Policy = iota
	// Random is what kube-proxy's iptables mode does (uniform per connection).
	Random
)

// Set is a live set of endpoints: a watch on EndpointSlices (with a port-forward per pod) adds and
// removes them while the probe runs. Safe for concurrent use.
type Set struct {
	mu      sync.RWMutex
	policy  Policy
	targets []Target
	next    uint64
	rnd     *rand.Rand
}

// NewSet makes an empty set; seed fixes the Random sequence so runs can be replayed.
func NewSet(policy Policy, seed uint64) *Set {
	return &Set{policy: policy, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// AddEndpoint adds or replaces (by name) an endpoint; it reports whether the name was new.
func (s *Set) AddEndpoint(t Target) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.targets {
		if s.targets[i].Name == t.Name {
			s.targets[i] = t
			return false
		}
	}
	s.targets = append(s.targets, t)
	return true
}

// RemoveEndpoint removes an endpoint by name; it reports whether it was there.
func (s *Set) RemoveEndpoint(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.targets, func(t Target) bool { return t.Name == name })
	if i < 0 {
		return false
	}
	s.targets = slices.Delete(s.targets, i, i+1)
	return true
}

// Names lists the current endpoints in insertion order.
func (s *Set) Names() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, len(s.targets))
	for i, t := range s.targets {
		out[i] = t.Name
	}
	return out
}

// Pick takes the write lock because both policies advance state (the cursor or the generator).
func (s *Set) Pick(uint64) (Target, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := uint64(len(s.targets))
	if n == 0 {
		return Target{}, false
	}
	var i uint64
	if s.policy == Random {
		i = s.rnd.Uint64N(n)
	} else {
		i = s.next % n
		s.next++
	}
	return s.targets[i], true
}
