package pressure

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-ray/kubectl-ray/pkg/internal/testio"
)

// These tests run the generated scripts for real, with /bin/sh and with busybox's own sh and
// applets (the default image's), in a temporary directory with small sizes and short durations.

type shell struct {
	name string
	sh   string
	path string // PATH for the run; busybox applets only for the busybox shell
}

// shells are the interpreters present on this machine. busybox is optional (apt-get install
// busybox); without it only /bin/sh runs and the log says so.
func shells(t *testing.T) []shell {
	t.Helper()
	out := []shell{{name: "sh", sh: "/bin/sh", path: os.Getenv("PATH")}}
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Log("busybox is not installed: the scripts run under /bin/sh only")
		return out
	}
	bin := t.TempDir()
	for _, a := range []string{"sh", "fallocate", "dd", "df", "head", "tail", "mkfifo", "sleep", "kill", "rm"} {
		if err := os.Symlink(bb, filepath.Join(bin, a)); err != nil {
			t.Fatal(err)
		}
	}
	return append(out, shell{name: "busybox", sh: filepath.Join(bin, "sh"), path: bin})
}

type run struct {
	cmd    *exec.Cmd
	out    *testio.Buffer
	start  time.Time
	done   chan struct{}
	result error
}

// start runs script, the plain shell program, from a file.
func start(t *testing.T, sh shell, script string) *run {
	t.Helper()
	f := filepath.Join(t.TempDir(), "script.sh")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return startCmd(t, exec.Command(sh.sh, f), sh)
}

// startCmd starts cmd with sh's PATH and captures what it says.
func startCmd(t *testing.T, cmd *exec.Cmd, sh shell) *run {
	t.Helper()
	r := &run{cmd: cmd, out: &testio.Buffer{}, done: make(chan struct{})}
	r.cmd.Env = []string{"PATH=" + sh.path}
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	// A child the script left behind holds the output pipe open: Wait must not wait for it (the
	// test then fails on what was left, instead of hanging until go test's timeout).
	r.cmd.WaitDelay = 5 * time.Second
	r.start = time.Now()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.result = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = r.cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

// wait returns the exit code and how long the script ran; the test fails if it outlives limit.
func (r *run) wait(t *testing.T, limit time.Duration) (int, time.Duration) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(limit):
		t.Fatalf("script still running after %s; output:\n%s", limit, r.out)
	}
	return r.cmd.ProcessState.ExitCode(), time.Since(r.start)
}

// eachShell runs test under each shell of shells(t).
func eachShell(t *testing.T, test func(t *testing.T, sh shell)) {
	for _, sh := range shells(t) {
		t.Run(sh.name, func(t *testing.T) { test(t, sh) })
	}
}

// exits fails the test unless the script exits with code within limit; it returns how long it ran.
func (r *run) exits(t *testing.T, code int, limit time.Duration) time.Duration {
	t.Helper()
	got, took := r.wait(t, limit)
	if got != code {
		t.Fatalf("exit %d, want %d; output:\n%s", got, code, r.out)
	}
	return took
}

// said fails the test unless the script's output has line.
func (r *run) said(t *testing.T, line string) {
	t.Helper()
	if !strings.Contains(r.out.String(), line) {
		t.Errorf("output lacks %q:\n%s", line, r.out)
	}
}

// gone fails the test if path (a fill, a FIFO) is left after the run.
func gone(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s still exists after the run", path)
	}
}

// eventually polls cond for up to 8 seconds. The bounds in these tests are loose on purpose: they
// catch a script that ignores its deadline, not a slow machine (go test runs them beside the
// end-to-end package, under load).
func eventually(t *testing.T, what string, r *run, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(8 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s did not happen; output:\n%s", what, r.out)
}

func diskSpec(dir string, bytes int64, d time.Duration) Spec {
	return Spec{Kind: Disk, Fill: FillNode, Bytes: bytes, Duration: d, Name: "kubectl-ray-disk-pressure-test1",
		Paths: Paths{OwnDir: dir, TargetRoot: dir + "/root", TargetDir: "/tmp", WorkDir: dir, Meminfo: "/proc/meminfo"}}
}

// allocated is the space a file really occupies (fallocate and dd both allocate blocks).
func allocated(path string) int64 {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return -1
	}
	return st.Blocks * 512
}

func TestDiskScriptFillsHoldsCleansUp(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		dir := t.TempDir()
		s := diskSpec(dir, 4<<20, 2*time.Second)
		file := filepath.Join(dir, s.Name+".fill")
		r := start(t, sh, Script(s))
		eventually(t, "a 4Mi file", r, func() bool { return allocated(file) >= 4<<20 })
		took := r.exits(t, 0, 12*time.Second)
		if took < 2*time.Second || took > 7*time.Second {
			t.Errorf("ran %s, want about the 2s duration", took)
		}
		gone(t, file)
		for _, line := range []string{"writing 4194304 bytes to " + file, "filled; holding", "held for 2s", "removed " + file} {
			r.said(t, line)
		}
	})
}

// fallocate missing (or refused by the filesystem) falls back to dd. The script is run with
// fallocate renamed to a command that does not exist: a PATH without it is not enough, since a
// busybox built with FEATURE_SH_STANDALONE (Debian's busybox-static) runs its applets ahead of PATH.
func TestDiskScriptFallsBackToDD(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		dir := t.TempDir()
		s := diskSpec(dir, 3<<20+1, time.Second)
		file := filepath.Join(dir, s.Name+".fill")
		script := strings.Replace(Script(s), "fallocate -l", "no-such-fallocate -l", 1)
		if script == Script(s) {
			t.Fatal("the test could not take fallocate away: the script changed")
		}
		r := start(t, sh, script)
		// dd writes whole MiB: 3MiB+1 byte becomes 4MiB.
		eventually(t, "a 4Mi file written by dd", r, func() bool { return allocated(file) >= 4<<20 })
		r.exits(t, 0, 10*time.Second)
		r.said(t, "fallocate failed; writing with dd")
		gone(t, file)
	})
}

func TestDiskScriptTERMCleansUp(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		dir := t.TempDir()
		s := diskSpec(dir, 4<<20, 30*time.Second)
		file := filepath.Join(dir, s.Name+".fill")
		r := start(t, sh, Script(s))
		eventually(t, "the hold", r, func() bool { return strings.Contains(r.out.String(), "holding") })
		if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if took := r.exits(t, 143, 10*time.Second); took > 8*time.Second {
			t.Errorf("took %s to stop", took)
		}
		gone(t, file)
	})
}

func TestDiskScriptRefusesMoreThanFree(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		dir := t.TempDir()
		s := diskSpec(dir, 1<<62, 5*time.Second)
		r := start(t, sh, Script(s))
		r.exits(t, 2, 10*time.Second)
		r.said(t, "refusing to write 4611686018427387904 bytes")
		gone(t, filepath.Join(dir, s.Name+".fill"))
	})
}

// TestDiskScriptPercentOfFree needs a small filesystem whose free space is known: an 8Mi tmpfs.
// Mounting needs root; elsewhere the test says so and skips.
func TestDiskScriptPercentOfFree(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8m"); err != nil {
		t.Skipf("cannot mount an 8Mi tmpfs here (%v): percent-of-free-space is not run", err)
	}
	defer func() { _ = syscall.Unmount(dir, 0) }()
	eachShell(t, func(t *testing.T, sh shell) {
		s := diskSpec(dir, 0, 2*time.Second)
		s.Percent = 50
		file := filepath.Join(dir, s.Name+".fill")
		r := start(t, sh, Script(s))
		eventually(t, "half of the tmpfs filled", r, func() bool { return allocated(file) == 4<<20 })
		r.exits(t, 0, 10*time.Second)
		r.said(t, "writing 4194304 bytes") // 50% of 8Mi free
	})
}

func TestDiskScriptContainerFillWritesUnderTargetRoot(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		dir := t.TempDir()
		s := diskSpec(dir, 1<<20, time.Second)
		s.Fill = FillContainer
		if err := os.MkdirAll(filepath.Join(dir, "root", "tmp"), 0o755); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "root", "tmp", s.Name+".fill")
		r := start(t, sh, Script(s))
		eventually(t, "a file under the target root", r, func() bool { return allocated(file) >= 1<<20 })
		r.exits(t, 0, 10*time.Second)
		gone(t, file)
	})
}

func memSpec(dir string, bytes int64, d time.Duration) Spec {
	return Spec{Kind: Memory, Bytes: bytes, Duration: d, Name: "kubectl-ray-memory-pressure-test1",
		Paths: Paths{OwnDir: dir, WorkDir: dir, Meminfo: "/proc/meminfo"}}
}

// holder is one of the script's dd and what it has resident.
type holder struct {
	pid int
	rss int64
}

// holders are the script's children that hold the memory (dd).
func holders(pid int) []holder {
	var out []holder
	kids, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	for _, k := range strings.Fields(string(kids)) {
		status, err := os.ReadFile("/proc/" + k + "/status")
		if err != nil || !strings.Contains(string(status), "Name:\tdd") {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				child, _ := strconv.Atoi(k)
				out = append(out, holder{child, kb * 1024})
			}
		}
	}
	return out
}

// holderRSS is the first holder and its resident size (0, 0 when there is none).
func holderRSS(pid int) (int, int64) {
	if h := holders(pid); len(h) > 0 {
		return h[0].pid, h[0].rss
	}
	return 0, 0
}

func TestMemoryScriptAllocatesHoldsReleases(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		dir := t.TempDir()
		s := memSpec(dir, 32<<20, 4*time.Second)
		r := start(t, sh, Script(s))
		var holder int
		eventually(t, "32Mi resident in the holder", r, func() bool {
			var rss int64
			holder, rss = holderRSS(r.cmd.Process.Pid)
			return rss >= 32<<20
		})
		took := r.exits(t, 0, 15*time.Second)
		if took < 4*time.Second || took > 9*time.Second {
			t.Errorf("ran %s, want about the 4s duration", took)
		}
		gone(t, "/proc/"+strconv.Itoa(holder)) // the holder process
		gone(t, filepath.Join(dir, s.Name+".fifo"))
		r.said(t, "allocated 33554432 bytes, resident ")
		r.said(t, "s after start; holding until 4s after start")
		r.said(t, "released memory")
	})
}

func TestMemoryScriptTERMReleases(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		s := memSpec(t.TempDir(), 8<<20, 30*time.Second)
		r := start(t, sh, Script(s))
		eventually(t, "the hold", r, func() bool { return strings.Contains(r.out.String(), "holding") })
		holder, rss := holderRSS(r.cmd.Process.Pid)
		if rss < 8<<20 {
			t.Fatalf("holder %d has %d bytes resident, want 8Mi", holder, rss)
		}
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		r.exits(t, 143, 10*time.Second)
		gone(t, "/proc/"+strconv.Itoa(holder)) // the holder process
	})
}

func TestMemoryScriptPercentOfMemAvailable(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		dir := t.TempDir()
		meminfo := filepath.Join(dir, "meminfo")
		// 20480 kB available: 25% is 5Mi.
		if err := os.WriteFile(meminfo, []byte("MemTotal:       99999999 kB\nMemFree:  1 kB\nMemAvailable:      20480 kB\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s := memSpec(dir, 0, time.Second)
		s.Percent, s.Paths.Meminfo = 25, meminfo
		r := start(t, sh, Script(s))
		r.exits(t, 0, 10*time.Second)
		r.said(t, "allocating 5242880 bytes") // 25% of 20480 kB
	})
}

// The deadline bounds the fill too: a fill that cannot finish is stopped and cleaned up.
func TestMemoryScriptDeadlineDuringFill(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		dir := t.TempDir()
		// head writes into a FIFO whose reader is stopped, so the fill blocks until the deadline.
		s := memSpec(dir, 1<<40, time.Second)
		script := strings.Replace(Script(s), stallReader[0], stallReader[1], 1)
		if script == Script(s) {
			t.Fatal("the test could not stop the reader: the script changed")
		}
		r := start(t, sh, script)
		took := r.exits(t, 124, 10*time.Second)
		r.said(t, "deadline of 1s reached during fill")
		if took > 6*time.Second {
			t.Errorf("took %s, want about 1s", took)
		}
	})
}
