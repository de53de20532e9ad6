package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// As a child of the tests below, this test binary exits at once with the code asked for.
func TestMain(m *testing.M) {
	if code := os.Getenv("MAXRSS_TEST_EXIT"); code != "" {
		n, _ := strconv.Atoi(code)
		os.Exit(n)
	}
	os.Exit(m.Run())
}

func buildLauncher(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "maxrss")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func runLauncher(t *testing.T, launcher string, exitCode int) (result, int) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	resFile := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(launcher, "-o", resFile, "--", self)
	cmd.Env = append(os.Environ(), "MAXRSS_TEST_EXIT="+strconv.Itoa(exitCode))
	err = cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatal(err)
	}
	var r result
	b, err := os.ReadFile(resFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r, cmd.ProcessState.ExitCode()
}

// A fat parent must not inflate what the launcher reports of its child, the reason it exists.
func TestLauncherReportsTheChildNotTheParent(t *testing.T) {
	launcher := buildLauncher(t)
	const fat = 256 << 20
	ballast := make([]byte, fat)
	for i := range ballast {
		ballast[i] = 1
	}
	r, code := runLauncher(t, launcher, 0)
	if code != 0 || r.WallNanos <= 0 {
		t.Fatalf("exit %d, result %+v", code, r)
	}
	if r.MaxRSSBytes <= 0 || r.MaxRSSBytes >= fat/2 {
		t.Fatalf("launcher reported %d MiB for a child that allocates nothing, from a %d MiB parent", r.MaxRSSBytes>>20, fat>>20)
	}
	// What the launcher avoids: measured directly, the same child carries this test's size.
	self, _ := os.Executable()
	direct := exec.Command(self)
	direct.Env = append(os.Environ(), "MAXRSS_TEST_EXIT=0")
	if err := direct.Run(); err != nil {
		t.Fatal(err)
	}
	got := direct.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
	if got < fat/2 {
		t.Skipf("this kernel does not fold the parent's RSS into a child's ru_maxrss (direct: %d MiB): the launcher is not needed here", got>>20)
	}
	t.Logf("child via launcher: %d MiB; same child measured from the %d MiB parent: %d MiB", r.MaxRSSBytes>>20, fat>>20, got>>20)
	_ = ballast[len(ballast)-1]
}

func TestLauncherPassesTheExitCode(t *testing.T) {
	if _, code := runLauncher(t, buildLauncher(t), 3); code != 3 {
		t.Fatalf("exit code %d, want 3", code)
	}
}
