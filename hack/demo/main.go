// Command demo tells the story kubectl-ray exists for, on a local sandbox with the real KubeRay
// v1.1.1 operator: a RayCluster's head is evicted by node pressure and KubeRay never replaces it;
// doctor explains it and heal repairs it. Where the machine can run the sandbox's real node
// (realnode.go) that happens for real: chaos disk-pressure fills the node's disk and the real
// kubelet evicts the head. Elsewhere the kubelet's part is played through the API, and then chaos
// disk-pressure reproduces the eviction with the kubelet played again (pressure.go). Then chaos
// head-kill kills a head under traffic (Ray Serve's proxies are played, headkill.go), a
// RayService's head is killed under KubeRay's own RayService controller, and the sandbox is torn
// down. Every kubectl-ray call goes through kubectl's plugin discovery, as a person would type it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ray/kubectl-ray/test/play"
	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

func main() {
	bin := flag.String("bin", "bin/kubectl-ray", "the kubectl-ray binary to demonstrate")
	dir := flag.String("dir", "", "sandbox state directory (default .sandbox/demo)")
	timeout := flag.Duration("timeout", 6*time.Minute, "give up after this long (the demo takes about 3 minutes)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := run(ctx, *bin, *dir); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("gave up after %s (--timeout): %v", *timeout, err)
		}
		fmt.Fprintln(os.Stderr, "demo: FAILED:", err)
		os.Exit(1)
	}
	fmt.Println("\ndemo: OK")
}

type demo struct {
	ctx     context.Context
	sb      *sandbox.Sandbox
	pathEnv string
}

func run(ctx context.Context, bin, dir string) error {
	absBin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(absBin); err != nil {
		return fmt.Errorf("%s is missing: run `make build` first", bin)
	}
	repo, err := sandbox.FindRepo(".")
	if err != nil {
		return err
	}
	if dir == "" {
		dir = filepath.Join(repo, ".sandbox", "demo")
	}
	// kubectl finds the plugin on PATH: put a kubectl-ray link first on it.
	plugins := dir + "-plugins"
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		return err
	}
	link := filepath.Join(plugins, "kubectl-ray")
	_ = os.Remove(link)
	if err := os.Symlink(absBin, link); err != nil {
		return err
	}

	// Seed 000 runs on the real node where this machine can run one; elsewhere the kubelet's part
	// is played, and the demo says so.
	real := sandbox.RealNodeUnavailable() == nil
	if real {
		title("Starting a sandbox: etcd, kube-apiserver, controller-manager, scheduler, kwok, a real node and KubeRay v1.1.1")
	} else {
		title("Starting a sandbox: etcd, kube-apiserver, controller-manager, scheduler, kwok and KubeRay v1.1.1")
		fmt.Printf("(no real node here: %v; the kubelet's part is played)\n", sandbox.RealNodeUnavailable())
	}
	cfg := sandbox.Config{Dir: dir, Operator: sandbox.OperatorV111, Nodes: 3, ServeNetwork: true, RealNode: real}
	_ = sandbox.Down(cfg, os.Stderr) // a demo interrupted before leaves its sandbox behind
	sb, err := sandbox.Up(ctx, cfg, os.Stdout)
	if err != nil {
		return err
	}
	defer func() {
		title("Tearing down")
		_ = sb.Down()
	}()
	d := &demo{ctx: ctx, sb: sb, pathEnv: plugins + string(os.PathListSeparator) + os.Getenv("PATH")}
	if real {
		if err := d.seed000Real(); err != nil {
			return fmt.Errorf("seed 000 on the real node: %w", err)
		}
		return d.onKwok(false)
	}
	return d.onKwok(true)
}

// onKwok is the rest of the story on kwok's nodes: with evict, seed 000 with the kubelet played
// (where no real node runs), then head-kill under played Serve proxies, disk-pressure with the
// kubelet played, and a RayService.
func (d *demo) onKwok(evict bool) error {
	ctx, sb := d.ctx, d.sb
	title("Creating a RayCluster from KubeRay's ray-cluster.complete.yaml sample")
	if err := d.sh("kubectl", "create", "-f", sb.Config().SamplePath("ray-cluster.complete.yaml")); err != nil {
		return err
	}
	head, err := d.waitHead("raycluster-complete", 90*time.Second)
	if err != nil {
		return err
	}
	_ = d.sh("kubectl", "get", "pods", "-o", "wide")
	if !evict {
		if err := d.headKill("raycluster-complete"); err != nil {
			return fmt.Errorf("head-kill: %w", err)
		}
		if err := d.rayService(); err != nil {
			return fmt.Errorf("rayservice: %w", err)
		}
		return nil
	}

	title("Disk pressure on " + head + "'s node: the kubelet evicts the head (played through the API: no kubelet runs on kwok's nodes)")
	if _, err := play.KubeletEvict(ctx, sb.Kube, "default", head, "ephemeral-storage"); err != nil {
		return err
	}
	fmt.Println("Waiting 20 s for KubeRay v1.1.1 to react ...")
	time.Sleep(20 * time.Second)
	_ = d.sh("kubectl", "get", "pods")
	_ = d.sh("kubectl", "get", "raycluster")
	fmt.Println("The head is still Failed/Evicted and no new head exists; the RayCluster may even read ready.")
	fmt.Println("KubeRay v1.1.1's log says why:")
	d.operatorWillNotDelete()
	if err := d.afterEviction(true); err != nil {
		return err
	}
	if err := d.headKill("raycluster-complete"); err != nil {
		return fmt.Errorf("head-kill: %w", err)
	}
	if err := d.diskPressure("raycluster-complete"); err != nil {
		return fmt.Errorf("disk-pressure: %w", err)
	}
	if err := d.rayService(); err != nil {
		return fmt.Errorf("rayservice: %w", err)
	}
	return nil
}

// afterEviction diagnoses and repairs the evicted head with the plugin, through kubectl; with
// plan, it shows heal's plan first.
func (d *demo) afterEviction(plan bool) error {
	title("kubectl ray doctor: what is broken, why, and how to fix it")
	// doctor exits 1 when it finds an error: that is the point here.
	if err := d.expect(1, "kubectl", "ray", "doctor"); err != nil {
		return err
	}
	if plan {
		title("kubectl ray heal: see the plan, then repair")
		if err := d.sh("kubectl", "ray", "heal", "--dry-run"); err != nil {
			return err
		}
	} else {
		title("kubectl ray heal: repair")
	}
	if err := d.sh("kubectl", "ray", "heal", "--yes"); err != nil {
		return err
	}
	title("Healthy again")
	if err := d.sh("kubectl", "ray", "doctor"); err != nil {
		return err
	}
	_ = d.sh("kubectl", "get", "pods")
	return d.sh("kubectl", "get", "events", "--field-selector", "reason=RayHeadHealed")
}

func (d *demo) waitHead(cluster string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		pods, err := d.sb.Kube.CoreV1().Pods("default").List(d.ctx, metav1.ListOptions{LabelSelector: "ray.io/cluster=" + cluster + ",ray.io/node-type=head"})
		if err == nil && len(pods.Items) == 1 && pods.Items[0].Status.Phase == "Running" && pods.Items[0].DeletionTimestamp == nil {
			return pods.Items[0].Name, nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return "", fmt.Errorf("no Running head for %s after %s", cluster, timeout)
}

// sh shows a command and runs it with the sandbox's kubeconfig and the plugin on PATH; any exit
// code but 0 is an error.
func (d *demo) sh(name string, args ...string) error { return d.expect(0, name, args...) }

// expect runs a command like sh and fails unless it exits with code.
func (d *demo) expect(code int, name string, args ...string) error {
	line := strings.TrimSpace(name + " " + strings.Join(args, " "))
	fmt.Printf("\n$ %s\n", line)
	cmd := exec.CommandContext(d.ctx, name, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
	cmd.Env = append(os.Environ(), "KUBECONFIG="+d.sb.Kubeconfig(), "PATH="+d.pathEnv)
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		fmt.Printf("(exit code %d)\n", ee.ExitCode())
		if ee.ExitCode() != code {
			return fmt.Errorf("`%s` exited with code %d, want %d", line, ee.ExitCode(), code)
		}
	case err != nil:
		return fmt.Errorf("`%s`: %v", line, err)
	case code != 0:
		return fmt.Errorf("`%s` exited with code 0, want %d", line, code)
	}
	return nil
}

func title(s string) { fmt.Printf("\n==> %s\n", s) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + " ..."
}
