package probe

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
