package chaos

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/headkill"
	"github.com/kubectl-ray/kubectl-ray/pkg/chaos/probe"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
	"github.com/kubectl-ray/kubectl-ray/pkg/exit"
	"github.com/kubectl-ray/kubectl-ray/pkg/kube"
)

func init() {
	subcommands = append(subcommands, NewHeadKillCmd)
}

// DefaultServePort is the port of a RayService's serve Service (<name>-serve-svc).
const DefaultServePort = 8000

// HeadKillOptions is `kubectl ray chaos head-kill`.
type HeadKillOptions struct {
	f *cmdutil.Factory

	// flags
	mode            string
	target          string
	service         string
	port            int
	path            string
	method          string
	data            string
	headers         []string
	rate            string
	warmup          time.Duration
	after           time.Duration
	untilRecovered  bool
	timeout         time.Duration
	requestTimeout  time.Duration
	maxErrors       int64
	minAvailability float64
	output          string
	reportHTML      string
	yes             bool
	dryRun          bool
	progressEvery   time.Duration

	// completed
	namespace      string
	cluster        string // RAYCLUSTER argument
	rayService     string // rayservice/NAME argument
	afterSet       bool
	maxErrorsSet   bool
	minAvailSet    bool
	probeCfg       probe.Config
	targetBase     string // --target's scheme://host[:port]
	killMode       kube.KillMode
	servicePortSet bool
}

// NewHeadKillCmd returns `kubectl ray chaos head-kill`.
func NewHeadKillCmd(f *cmdutil.Factory) *cobra.Command {
	o := &HeadKillOptions{f: f}
	cmd := &cobra.Command{
		ValidArgsFunction: f.CompleteRayNames(cmdutil.CompleteClusters | cmdutil.CompleteServices),
		Use:               "head-kill (RAYCLUSTER | rayservice/NAME)",
		Short:             "Kill a Ray head under a live availability probe and report every failed request",
		Long: `Probes the cluster's serving endpoint at a constant rate (open loop: a slow answer never delays
the next request), kills the head pod once the warm-up is healthy, and keeps probing while it
watches the pods, the RayCluster and the RayService. The report counts every request by status and
by the pod that served it, times the error window and the recovery, and checks the SLO.

What is probed: --target URL, or --service NAME --port N (for rayservice/NAME the default is its
serve Service <name>-serve-svc on port 8000). A Service is reached through one port-forward per
ready endpoint pod (through the API server, as kubectl port-forward), spread round-robin, and the
set follows the Service's EndpointSlices while the test runs.

Exit codes: 0 the SLO held, 1 it broke (or --until-recovered timed out), 2 bad input or a failed
warm-up (nothing was killed), 3 API errors and an eviction refused by a PodDisruptionBudget, 4 no
RBAC permission (the verb and resource are named), 5 the cluster, RayService, Service, head or
ready endpoints were not found, 6 not confirmed, 130 interrupted (the report of what was seen is
printed first).`,
		Example: `  # Kill the head of RayService demo while probing its serve Service; fail if more than 10 requests fail
  kubectl ray chaos head-kill rayservice/demo --rate 50/s --warmup 10s --after 60s --max-errors 10 --yes

  # Probe a URL, stop once recovered, write a JUnit file for CI and an HTML page
  kubectl ray chaos head-kill demo --target http://serve.example:8000 --path /healthz \
    --until-recovered --timeout 5m --min-availability 99 -o junit --report-html head-kill.html --yes

  # Show what would happen: nothing is killed and no request is sent
  kubectl ray chaos head-kill rayservice/demo --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.RunOptions(o, cmd, args) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.mode, "mode", string(kube.KillDelete), "How to kill the head: delete (its grace period), force (grace period 0) or evict (Eviction API; PodDisruptionBudgets apply)")
	_ = cmd.RegisterFlagCompletionFunc("mode", fixed("delete", "force", "evict"))
	fl.StringVar(&o.target, "target", "", "Probe this URL (http or https); its path is the default --path")
	fl.StringVar(&o.service, "service", "", "Probe this Service through port-forwards to its ready endpoint pods (default for rayservice/NAME: NAME-serve-svc)")
	fl.IntVar(&o.port, "port", 0, "The --service port to probe (default 8000 for a RayService's serve Service)")
	fl.StringVar(&o.path, "path", "", "Request path (and query), e.g. /healthz (default /)")
	fl.StringVar(&o.method, "method", http.MethodGet, "Request method")
	fl.StringVar(&o.data, "data", "", "Request body")
	fl.StringArrayVar(&o.headers, "header", nil, "Request header K:V (repeatable); Host:NAME sets the Host")
	fl.StringVar(&o.rate, "rate", "50/s", "Requests per second, e.g. 50/s, 50 or 600/m")
	fl.DurationVar(&o.warmup, "warmup", 10*time.Second, "Probe this long before the kill; the head is killed only if every warm-up request succeeded")
	fl.DurationVar(&o.after, "after", 60*time.Second, "Probe this long after the kill (or use --until-recovered)")
	fl.BoolVar(&o.untilRecovered, "until-recovered", false, "Probe after the kill until the new head is Ready, the endpoints are back and no request failed for 1s, at most --timeout")
	fl.DurationVar(&o.timeout, "timeout", 5*time.Minute, "With --until-recovered: the longest the probe runs after the kill")
	fl.DurationVar(&o.requestTimeout, "request-timeout", probe.DefaultTimeout, "Per-request timeout of the probe (on this command it replaces kubectl's --request-timeout for API calls, which then use client-go's defaults)")
	fl.Int64Var(&o.maxErrors, "max-errors", 0, "SLO: at most this many failed requests")
	fl.Float64Var(&o.minAvailability, "min-availability", 0, "SLO: at least this percentage of requests succeed, e.g. 99.9")
	fl.StringVarP(&o.output, "output", "o", "text", "Report format: text, json or junit")
	_ = cmd.RegisterFlagCompletionFunc("output", fixed("text", "json", "junit"))
	fl.StringVar(&o.reportHTML, "report-html", "", "Also write the report as one self-contained HTML page to this file")
	fl.BoolVarP(&o.yes, "yes", "y", false, "Do not ask for confirmation")
	fl.BoolVar(&o.dryRun, "dry-run", false, "Print what would be done and have the API server dry-run the kill; kill nothing, send no request")
	fl.DurationVar(&o.progressEvery, "progress-interval", 5*time.Second, "How often to print a progress line when stderr is not a terminal")
	return cmd
}

// Complete reads the argument, the namespace and which flags were given.
func (o *HeadKillOptions) Complete(cmd *cobra.Command, args []string) error {
	arg := args[0]
	if kind, name, ok := strings.Cut(arg, "/"); ok {
		switch strings.ToLower(kind) {
		case "rayservice", "rayservices", "rayservice.ray.io":
			o.rayService = name
		case "raycluster", "rayclusters", "raycluster.ray.io":
			o.cluster = name
		default:
			return exit.Usagef("cannot target %q: name a RayCluster, or a RayService as rayservice/NAME", arg)
		}
	} else {
		o.cluster = arg
	}
	if o.cluster == "" && o.rayService == "" {
		return exit.Usagef("cannot target %q: name a RayCluster, or a RayService as rayservice/NAME", arg)
	}
	fl := cmd.Flags()
	o.afterSet = fl.Changed("after")
	o.maxErrorsSet = fl.Changed("max-errors")
	o.minAvailSet = fl.Changed("min-availability")
	o.servicePortSet = fl.Changed("port")
	ns, err := o.f.Namespace()
	if err != nil {
		return err
	}
	o.namespace = ns
	return nil
}

// Validate checks every flag before the API is touched: bad input kills nothing.
func (o *HeadKillOptions) Validate() error {
	o.killMode = kube.KillMode(o.mode)
	switch o.killMode {
	case kube.KillDelete, kube.KillForce, kube.KillEvict:
	default:
		return exit.Usagef("--mode must be delete, force or evict, not %q", o.mode)
	}
	rate, err := parseRate(o.rate)
	if err != nil {
		return err
	}
	switch o.output {
	case "text", "json", "junit":
	default:
		return exit.Usagef("--output must be text, json or junit, not %q", o.output)
	}
	if o.warmup <= 0 {
		return exit.Usagef("--warmup must be positive (the head is killed only after a healthy warm-up), e.g. --warmup 10s")
	}
	if float64(o.warmup)/float64(time.Second)*rate < 1 {
		return exit.Usagef("--warmup %s at --rate %s sends no request: lengthen the warm-up or raise the rate", o.warmup, o.rate)
	}
	if o.untilRecovered && o.afterSet {
		return exit.Usagef("--after and --until-recovered exclude each other: give one")
	}
	if o.untilRecovered && o.timeout <= 0 {
		return exit.Usagef("--timeout must be positive, e.g. --timeout 5m")
	}
	if !o.untilRecovered && o.after <= 0 {
		return exit.Usagef("--after must be positive, e.g. --after 60s")
	}
	if o.requestTimeout <= 0 {
		return exit.Usagef("--request-timeout must be positive, e.g. --request-timeout 2s")
	}
	if o.progressEvery <= 0 {
		return exit.Usagef("--progress-interval must be positive")
	}
	if err := checkWritable(o.reportHTML); err != nil {
		return exit.Usagef("--report-html %s: %v; give a file in a directory you can write", o.reportHTML, err)
	}
	if o.maxErrorsSet && o.maxErrors < 0 {
		return exit.Usagef("--max-errors must be 0 or more, not %d", o.maxErrors)
	}
	if o.minAvailSet && (math.IsNaN(o.minAvailability) || o.minAvailability < 0 || o.minAvailability > 100) {
		return exit.Usagef("--min-availability is a percentage from 0 to 100, not %v", o.minAvailability)
	}
	if o.target != "" && (o.service != "" || o.servicePortSet) {
		return exit.Usagef("--target and --service/--port exclude each other: probe a URL or a Service")
	}
	if o.target == "" && o.service == "" && o.rayService == "" {
		return exit.Usagef("say what to probe for RayCluster %s: --target URL, or --service NAME --port N", o.cluster)
	}
	if o.service != "" && !o.servicePortSet {
		return exit.Usagef("--service %s needs --port N (the Service port to probe)", o.service)
	}
	if o.servicePortSet && (o.port < 1 || o.port > 65535) {
		return exit.Usagef("--port must be from 1 to 65535, not %d", o.port)
	}
	path := o.path
	if o.target != "" {
		// Messages show the URL redacted: a target can carry credentials.
		u, err := url.Parse(o.target)
		if err != nil {
			return exit.Usagef("--target is not a URL (%v), e.g. http://serve.example:8000", errors.Unwrap(err))
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return exit.Usagef("--target %q is not an http or https URL, e.g. http://serve.example:8000", u.Redacted())
		}
		if u.User != nil {
			return exit.Usagef("--target %q has credentials in it, which the probe would not send and reports would show: pass them as --header 'Authorization: ...'", u.Redacted())
		}
		o.targetBase = u.Scheme + "://" + u.Host
		if rest := u.RequestURI(); rest != "/" {
			if o.path != "" {
				return exit.Usagef("--target %q has a path and --path is %q: give the path once", shownPath(rest), shownPath(o.path))
			}
			path = rest
		}
	}
	header := http.Header{}
	for i, h := range o.headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			// The value is not echoed: a header is where tokens go.
			return exit.Usagef("--header number %d is not K:V, e.g. --header 'Content-Type: application/json'", i+1)
		}
		header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	o.probeCfg = probe.Config{Rate: rate, Method: strings.ToUpper(o.method), Path: path, Header: header, Timeout: o.requestTimeout}
	if o.data != "" {
		o.probeCfg.Body = []byte(o.data)
	}
	post := o.after
	if o.untilRecovered {
		post = o.timeout
	}
	// The schedule the run will plan, so the probe's caps (rate × duration) hold for it.
	return o.probeCfg.Validate(headkill.ScheduleLength(o.warmup, o.requestTimeout, post))
}

// parseRate reads 50, 50/s, 3000/m.
func parseRate(s string) (float64, error) {
	num, unit, _ := strings.Cut(strings.TrimSpace(s), "/")
	per := 1.0
	switch unit {
	case "", "s", "sec", "1s":
	case "m", "min", "1m":
		per = 60
	default:
		return 0, exit.Usagef("--rate %q: use requests per second or minute, e.g. 50/s or 600/m", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, exit.Usagef("--rate %q is not a number of requests, e.g. 50/s", s)
	}
	r := v / per
	switch {
	case r <= 0:
		return 0, exit.Usagef("--rate %q is not positive: use e.g. --rate 50/s", s)
	case r > probe.MaxRate:
		return 0, exit.Usagef("--rate %q is above the probe's limit of %d/s: lower --rate", s, probe.MaxRate)
	}
	return r, nil
}

// checkWritable makes sure a report file can be written before anything is killed: a bad path
// found after the kill would turn a finished run into an error. It creates and removes a
// temporary file next to path, so it leaves nothing behind. "" is fine (no file asked).
func checkWritable(path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return errors.New("is a directory")
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kubectl-ray-check-*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return pe.Err // the path is in the message already
		}
		return err
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}
