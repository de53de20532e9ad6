package experiment

import (
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
)

// Policy chooses how an EndpointSet spreads requests.
type Policy int

const (
	// RoundRobin is kube-proxy's IPVS default and makes per-endpoint counts predictable.
	RoundRobin Policy = iota
	// Random is what kube-proxy's iptables mode does (uniform per connection).
	Random
)

// EndpointSet is the probe's live set of endpoints (probe.Endpoints): the Feeder adds and
// removes them, a port-forward per ready pod, while the probe runs. Safe for concurrent use.
type EndpointSet struct {
	mu      sync.RWMutex
	policy  Policy
	targets []probe.Target
	next    uint64
	rnd     *rand.Rand
}

// NewEndpointSet makes an empty set; seed fixes the Random sequence so runs can be replayed.
func NewEndpointSet(policy Policy, seed uint64) *EndpointSet {
	return &EndpointSet{policy: policy, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// AddEndpoint adds or replaces (by name) an endpoint; it reports whether the name was new.
func (s *EndpointSet) AddEndpoint(t probe.Target) bool {
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
func (s *EndpointSet) RemoveEndpoint(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.targets, func(t probe.Target) bool { return t.Name == name })
	if i < 0 {
		return false
	}
	s.targets = slices.Delete(s.targets, i, i+1)
	return true
}

// Names lists the current endpoints in insertion order.
func (s *EndpointSet) Names() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, len(s.targets))
	for i, t := range s.targets {
		out[i] = t.Name
	}
	return out
}

// Pick takes the write lock because both policies advance state (the cursor or the generator).
func (s *EndpointSet) Pick(uint64) (probe.Target, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := uint64(len(s.targets))
	if n == 0 {
		return probe.Target{}, false
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
