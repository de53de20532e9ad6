package rayapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The dashboard endpoints Read GETs, on the dashboard's own port (ray-project/ray,
// python/ray/dashboard): modules/healthz/healthz_head.py (200 "success", 503 when the GCS is
// not alive; newer Rays serve it from modules/reporter), the Jobs module's /api/version (plain
// JSON: version, ray_version, ray_commit), the State API of modules/state/state_head.py (the
// {"result", "msg", "data"} envelope; DEAD nodes included; its limit at the server's maximum of
// 10000, so a large cluster's table is whole), modules/serve/serve_head.py (ServeInstanceDetails
// of python/ray/serve/schema.py; on the dashboard port since Ray 2.8; 501 without Serve) and
// modules/job/job_head.py (a bare list of JobDetails). Checked against the versions of those
// files in Ray's repository from the 2.7/2.8 era to 2.44 and later.
const (
	PathGCSHealth = "/api/gcs_healthz"
	PathVersion   = "/api/version"
	PathNodes     = "/api/v0/nodes?limit=10000&detail=true"
	PathServe     = "/api/serve/applications/"
	PathJobs      = "/api/jobs/"
	// PathClusterStatus is the autoscaler's status (modules/reporter/reporter_head.py): the
	// monitor's JSON, camelCased, in data.clusterStatus; null without an autoscaler.
	PathClusterStatus = "/api/cluster_status"
)

// AuthHeader is the header KubeRay's dashboard client sends the token in
// (controllers/ray/utils/dashboardclient); Ray's dashboard reads it after Authorization.
const AuthHeader = "x-ray-authorization"

// maxBody bounds what one read takes in: a node table of thousands of nodes fits.
const maxBody = 32 << 20

// Read GETs the dashboard at base (http://127.0.0.1:PORT of a port-forward) into v, within ctx,
// sending token, when not "", as KubeRay's dashboard client does (AuthHeader).
// The GCS's health comes first: a dashboard that does not answer it is Unreachable and nothing
// else is asked. A later read that fails is listed in v.Failed, and what it would have shown is
// not claimed. A read the dashboard refuses (HTTP 401 or 403: Ray's token authentication) ends
// the reading: v.Unreachable says Refused, and nothing of Ray is claimed.
func Read(ctx context.Context, client *http.Client, base, token string, v *View) {
	drive(v, overHTTP(ctx, client, base, token, nil))
}

// ReadKeeping is Read that also keeps each answer in v.Answers as it came, a read that got no
// answer with why: what a bundle saves, and Replay reads again.
func ReadKeeping(ctx context.Context, client *http.Client, base, token string, v *View) {
	drive(v, overHTTP(ctx, client, base, token, &v.Answers))
}

// Replay rebuilds what Read made of answers kept by ReadKeeping (a bundle's, for doctor --from):
// the same reads in the same order through the same decoders, so the view, and doctor's findings
// on it, are those of the run that kept them. A read with no answer kept is one that was never
// made: it is listed in v.Failed.
func Replay(v *View, answers []Answer) {
	drive(v, func(path string) (int, []byte, *Unreachable) {
		for _, a := range answers {
			if a.Path == path {
				return a.Code, a.Body, a.Unreachable
			}
		}
		return 0, nil, &Unreachable{Reason: Unconnected, Detail: "no answer kept for it"}
	})
}

// fetch GETs one dashboard path: its status and body, or why there was no answer.
type fetch func(path string) (int, []byte, *Unreachable)

func overHTTP(ctx context.Context, client *http.Client, base, token string, keep *[]Answer) fetch {
	return func(path string) (int, []byte, *Unreachable) {
		code, body, err := get(ctx, client, base+path, token)
		var u *Unreachable
		if err != nil {
			code, body, u = 0, nil, unreachable(ctx, err)
		}
		if keep != nil {
			*keep = append(*keep, Answer{Path: path, Code: code, Body: body, Unreachable: u})
		}
		return code, body, u
	}
}

// drive makes Read's reads through get, and decodes them into v.
func drive(v *View, get fetch) {
	code, body, u := get(PathGCSHealth)
	switch {
	case u != nil:
		v.Unreachable = u
		return
	case code == http.StatusOK:
		v.GCSAlive = true
	case code == http.StatusServiceUnavailable:
		v.GCSMessage = firstLine(body)
	default: // Ray exempts its health checks from token authentication: a 401 here is not Ray's
		v.Unreachable = &Unreachable{Reason: HTTPError, Detail: fmt.Sprintf("GET %s answered HTTP %d%s", PathGCSHealth, code, quote(body))}
		return
	}
	read := func(path string, decode func([]byte) error) bool {
		if v.Unreachable != nil {
			return false // refused: every other read would be too
		}
		code, body, u := get(path)
		switch {
		case refused(code):
			// Ray's token authentication (ray/_private/authentication/http_token_authentication.py):
			// 401 "Unauthorized: Missing authentication token", 403 "Forbidden: Invalid
			// authentication token"; only the health checks are exempt.
			v.Unreachable = &Unreachable{Reason: Refused, Detail: fmt.Sprintf("GET %s answered HTTP %d%s", path, code, quote(body))}
		case u != nil:
			v.Failed = append(v.Failed, fmt.Sprintf("GET %s: %s", path, u.Detail))
		case code == http.StatusNotImplemented && path == PathServe:
			return true // Ray without Serve installed (serve_head.py answers 501): no applications
		case code == http.StatusNotFound && path == PathClusterStatus:
			return false // a dashboard without the reporter module: no autoscaler view, none claimed
		case code != http.StatusOK:
			v.Failed = append(v.Failed, fmt.Sprintf("GET %s: HTTP %d%s", path, code, quote(body)))
		default:
			if err := decode(body); err != nil {
				v.Failed = append(v.Failed, fmt.Sprintf("GET %s: %v", path, err))
				return false
			}
			return true
		}
		return false
	}
	read(PathVersion, func(b []byte) (err error) { v.Version, err = DecodeVersion(b); return })
	if !v.GCSAlive {
		return // the node table, Serve and the jobs all live in the GCS
	}
	v.NodesRead = read(PathNodes, func(b []byte) (err error) { v.Nodes, err = DecodeNodes(b); return })
	v.AppsRead = read(PathServe, func(b []byte) (err error) { v.Apps, err = DecodeApps(b); return })
	v.JobsRead = read(PathJobs, func(b []byte) (err error) { v.Jobs, err = DecodeJobs(b); return })
	read(PathClusterStatus, func(b []byte) (err error) {
		v.Demands, v.PendingLaunches, v.AutoscalerRead, err = DecodeClusterStatus(b)
		return
	})
}

// refused is an answer of Ray's token authentication.
func refused(code int) bool {
	return code == http.StatusUnauthorized || code == http.StatusForbidden
}

func get(ctx context.Context, client *http.Client, url, token string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set(AuthHeader, "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	return resp.StatusCode, b, err
}

// unreachable says why a request got no answer.
func unreachable(ctx context.Context, err error) *Unreachable {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return &Unreachable{Reason: Timeout, Detail: "the dashboard did not answer in time"}
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:] // "Get "http://127.0.0.1:1/api/...": EOF" -> the cause
	}
	return &Unreachable{Reason: Unconnected, Detail: "the dashboard did not answer through the port-forward: " + msg}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func quote(b []byte) string {
	if s := firstLine(b); s != "" {
		return ": " + s
	}
	return ""
}
