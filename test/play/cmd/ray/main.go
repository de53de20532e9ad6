// Command ray is the stand-in for Ray's own `ray` CLI inside the sandbox's stand-in Ray image
// (test/sandbox: realnode_images.go), which runs on the sandbox's real node. KubeRay starts a Ray
// container as `/bin/bash -lc -- "ulimit -n 65536; ray start --head ... --block"`, probes it with
// `wget ... http://localhost:52365/api/local_raylet_healthz | grep success` (and the dashboard's
// /api/gcs_healthz on the head), and gates workers on an init container that loops on
// `ray health-check --address <head-svc>:6379`. This binary answers all of that as a process in
// the pod, so the real kubelet's probes, signals, OOM kills and evictions act on a real process.
//
// What it plays (docs/sandbox.md names each): the GCS port accepts connections and says nothing;
// the dashboard and the dashboard agent answer the health paths with "success"; the Serve proxy
// on 8000 answers /-/healthz and every route with 200; `ray health-check` succeeds without
// dialling (the head Service's name needs cluster DNS, which the sandbox does not run); `ray stop`
// does nothing. There is no Ray: no tasks, actors, jobs or Serve applications. Like Ray, `ray
// start` writes its log files under /tmp/ray/session_<time>/logs, with session_latest linking to
// it: a few lines each, the GCS's naming its Redis password when REDIS_PASSWORD is set (as a
// logged command line would), which is what a bundle must redact.
//
// A few extra switches let a test make the process behave the way a real Ray node can
// (RAY_STANDIN_* variables, read at start): allocate memory until the cgroup's OOM killer acts
// (RAY_STANDIN_EAT_MIB; RAY_STANDIN_HEALTHCHECK_EAT_MIB in `ray health-check`, which the
// workers' init container runs with the Ray container's environment), exit at once with a given code (RAY_STANDIN_EXIT_CODE), or exit 0 on
// SIGTERM (RAY_STANDIN_SIGTERM=exit).
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: ray start|health-check|stop|--version (sandbox stand-in)")
		os.Exit(2)
	}
	switch args[0] {
	case "start":
		os.Exit(start(args[1:]))
	case "health-check":
		if mb := os.Getenv("RAY_STANDIN_HEALTHCHECK_EAT_MIB"); mb != "" {
			// The worker's wait-gcs-ready init container outgrowing its limit (kuberay #2735).
			eat(mb)
		}
		// Played: the GCS answers. The real command dials <head-svc>:6379, a cluster DNS name.
		fmt.Println("ray stand-in: health-check: GCS is ready (played)")
	case "stop":
		fmt.Println("ray stand-in: stop: nothing to stop")
	case "--version", "version":
		fmt.Println("ray, version " + envOr("RAY_STANDIN_VERSION", "2.9.0") + " (sandbox stand-in)")
	default:
		fmt.Fprintf(os.Stderr, "ray stand-in: %q is not played\n", args[0])
		os.Exit(2)
	}
}

// flagValue reads --name=value or --name value from ray start's arguments.
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if a == "--"+name {
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				return args[i+1], true
			}
			return "", true
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func port(args []string, name string, def int) int {
	if v, ok := flagValue(args, name); ok {
		if p, err := strconv.Atoi(v); err == nil {
			return p
		}
	}
	return def
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func start(args []string) int {
	_, head := flagValue(args, "head")
	host, _ := os.Hostname()
	role := "worker"
	if head {
		role = "head"
	}
	fmt.Printf("ray stand-in: starting a %s node on %s: %s\n", role, host, strings.Join(args, " "))
	if err := writeSessionLogs(head, host, args); err != nil {
		fmt.Printf("ray stand-in: no session logs: %v\n", err)
	}
	if code := os.Getenv("RAY_STANDIN_EXIT_CODE"); code != "" {
		c, _ := strconv.Atoi(code)
		fmt.Printf("ray stand-in: exiting with code %d as RAY_STANDIN_EXIT_CODE asks\n", c)
		return c
	}
	health := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "success") })
	mux := func(routes map[string]http.HandlerFunc) http.Handler {
		m := http.NewServeMux()
		for p, h := range routes {
			m.HandleFunc(p, h)
		}
		return m
	}
	errs := make(chan error, 4)
	serve := func(what string, p int, h http.Handler) {
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			errs <- fmt.Errorf("%s on port %d: %w", what, p, err)
			return
		}
		fmt.Printf("ray stand-in: %s listening on port %d\n", what, p)
		if h == nil {
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						errs <- err
						return
					}
					go func() { time.Sleep(time.Minute); c.Close() }()
				}
			}()
			return
		}
		go func() { errs <- (&http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}).Serve(l) }()
	}
	serve("dashboard agent", port(args, "dashboard-agent-listen-port", 52365), mux(map[string]http.HandlerFunc{
		"/api/local_raylet_healthz": health, "/api/healthz": health,
	}))
	serve("serve proxy", 8000, mux(map[string]http.HandlerFunc{
		"/-/healthz": health,
		"/":          func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "served by %s (ray stand-in)\n", host) },
	}))
	if head {
		serve("GCS", port(args, "port", 6379), nil)
		serve("dashboard", port(args, "dashboard-port", 8265), mux(map[string]http.HandlerFunc{
			"/api/gcs_healthz": health, "/api/healthz": health,
			"/api/version": func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, `{"version":"4","ray_version":%q,"ray_commit":"sandbox-stand-in"}`+"\n", envOr("RAY_STANDIN_VERSION", "2.9.0"))
			},
			// What doctor --ray reads besides, as Ray's dashboard shapes it: no Serve
			// applications, no jobs. The node table is not played (it would need every pod's
			// IP): the State API's route answers 404, as a dashboard without it would.
			"/api/serve/applications/": func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintln(w, `{"deploy_mode":"MULTI_APP","controller_info":{},"proxies":{},"applications":{}}`)
			},
			"/api/jobs/": func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, `[]`) },
		}))
	}
	if mb := os.Getenv("RAY_STANDIN_EAT_MIB"); mb != "" {
		go eat(mb)
	}
	sig := make(chan os.Signal, 1)
	if os.Getpid() == 1 && os.Getenv("RAY_STANDIN_SIGTERM") != "exit" {
		// Ray's `ray start --block` sets no SIGTERM handler; as a container's PID 1 (bash -lc execs
		// its last command) the kernel then drops SIGTERM, and the kubelet kills the container
		// after the grace period: exit 137, and an evicted pod ends Failed/Evicted, as in seed 000.
		// RAY_STANDIN_SIGTERM=exit plays a process that exits 0 instead (the pod then ends
		// Succeeded: real-node.md).
		signal.Ignore(syscall.SIGTERM)
		signal.Notify(sig, syscall.SIGINT)
	} else {
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	}
	select {
	case s := <-sig:
		fmt.Printf("ray stand-in: %s: stopping\n", s)
		return 0
	case err := <-errs:
		fmt.Fprintf(os.Stderr, "ray stand-in: %v\n", err)
		return 1
	}
}

// writeSessionLogs writes Ray's log directory as ray start lays it out: /tmp/ray/session_<time>/logs,
// and the link session_latest to the session.
func writeSessionLogs(head bool, host string, args []string) error {
	session := "session_" + time.Now().UTC().Format("2006-01-02_15-04-05_000000") + "_" + strconv.Itoa(os.Getpid())
	logs := "/tmp/ray/" + session + "/logs"
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	_ = os.Remove("/tmp/ray/session_latest")
	if err := os.Symlink(session, "/tmp/ray/session_latest"); err != nil {
		return err
	}
	files := map[string]string{
		"raylet.out": "raylet started on " + host + " (ray stand-in): " + strings.Join(args, " ") + "\n",
	}
	if head {
		gcs := "gcs_server started on port " + strconv.Itoa(port(args, "port", 6379)) + " (ray stand-in)\n"
		if pw := os.Getenv("REDIS_PASSWORD"); pw != "" {
			gcs += "gcs_server command line: gcs_server --redis_address=redis:6379 --redis_password=" + pw + "\n"
		}
		files["gcs_server.out"] = gcs
		files["dashboard.log"] = "dashboard listening on port " + strconv.Itoa(port(args, "dashboard-port", 8265)) + " (ray stand-in)\n"
		files["monitor.log"] = "monitor: no autoscaling (ray stand-in)\n"
	}
	for name, body := range files {
		if err := os.WriteFile(logs+"/"+name, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// eat allocates and touches memory, 16 MiB at a time, up to n MiB ("max": without end), so the
// container's memory cgroup limit is reached and the kernel's OOM killer ends the process, the
// way a Ray node that outgrows its limit is killed.
func eat(n string) {
	limit := -1
	if n != "max" {
		limit, _ = strconv.Atoi(n)
	}
	var held [][]byte
	for i := 0; limit < 0 || i*16 < limit; i++ {
		b := make([]byte, 16<<20)
		for j := range b {
			b[j] = byte(j)
		}
		held = append(held, b)
		if i%4 == 3 {
			fmt.Printf("ray stand-in: holding %d MiB\n", (i+1)*16)
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Printf("ray stand-in: holding %d MiB until stopped\n", len(held)*16)
	select {}
}
