package pressure

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stallReader replaces the memory script's dd by a holder that never allocates: its share is
// never resident, so the fill cannot finish before the deadline.
var stallReader = [2]string{ddHolder, `sleep 60 > "$f" & eaters="$eaters $!"`}

// ddHolder is the memory script's line that starts one holder.
const ddHolder = `dd if=/dev/zero bs="$size" count=1 2>/dev/null > "$f" & eaters="$eaters $!"`

// startExpandedScript runs script as the container would: escaped as Container escapes it, then
// expanded by the kubelet's rules (script_expand_test.go).
func startExpandedScript(t *testing.T, sh shell, script string) *run {
	t.Helper()
	return startCmd(t, exec.Command(sh.sh, "-c", kubeExpand(EscapeExpansion(script), nil)), sh)
}

// replaced is script with old replaced by new once; the test fails if the script no longer has old.
func replaced(t *testing.T, script, old, new string) string {
	t.Helper()
	out := strings.Replace(script, old, new, 1)
	if out == script {
		t.Fatalf("the script no longer has %q: the test must follow it", old)
	}
	return out
}

var workerRE = regexp.MustCompile(`worker pid (\d+)`)

// gonePID fails the test if pid still runs (or is a zombie nobody reaped) shortly after the run.
func gonePID(t *testing.T, r *run) {
	t.Helper()
	m := workerRE.FindStringSubmatch(r.out.String())
	if m == nil {
		t.Fatalf("the script did not say its worker's pid:\n%s", r.out)
	}
	pid, _ := strconv.Atoi(m[1])
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if stat, err := os.ReadFile("/proc/" + m[1] + "/stat"); err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
	}
	t.Errorf("the fill (pid %d) still runs after the script ended at its deadline:\n%s", pid, r.out)
}

// The deadline stops a fill still running, in the container's own (escaped, expanded) command: a
// fill that takes a minute is stopped at the 1s deadline and nothing of it keeps running.
func TestDeadlineStopsASlowFill(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		dir := t.TempDir()
		disk := diskSpec(dir, 1<<20, time.Second)
		slowDisk := replaced(t, Script(disk), `fallocate -l "$bytes" "$file" 2>/dev/null & worker=$!`,
			`sleep 60 & worker=$!; echo "worker pid $worker"`)
		mem := memSpec(t.TempDir(), 1<<30, time.Second)
		slowMem := replaced(t, Script(mem), stallReader[0], stallReader[1]+`; echo "worker pid $!"`)
		for _, script := range []string{slowDisk, slowMem} {
			r := startExpandedScript(t, sh, script)
			if took := r.exits(t, 124, 10*time.Second); took > 6*time.Second {
				t.Errorf("took %s, want about the 1s deadline", took)
			}
			r.said(t, "deadline of 1s reached during fill; stopped the fill")
			gonePID(t, r)
		}
		gone(t, dir+"/"+disk.Name+".fill")
	})
}

// More memory than one holder takes is held by several dd, each with its share resident.
func TestMemoryScriptHoldsInSeveralHolders(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		s := memSpec(t.TempDir(), 32<<20, 4*time.Second)
		s.HolderBytes = 8 << 20
		r := start(t, sh, Script(s))
		var seen []holder
		eventually(t, "four holders of 8Mi resident", r, func() bool {
			seen = holders(r.cmd.Process.Pid)
			full := 0
			for _, h := range seen {
				if h.rss >= 8<<20 {
					full++
				}
			}
			return full == 4
		})
		r.exits(t, 0, 15*time.Second)
		r.said(t, "allocating 33554432 bytes (4 holders of at most 8388608 bytes each)")
		r.said(t, "held for 4s")
		for _, h := range seen {
			gone(t, "/proc/"+strconv.Itoa(h.pid))
		}
	})
}

// A holder that dies (the kernel's OOM killer, a cgroup limit) leaves its share unheld: the script
// says so in one line, exits 1, and never says "holding".
func TestMemoryScriptFailsWhenAHolderDies(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		s := memSpec(t.TempDir(), 3<<20, 5*time.Second)
		s.HolderBytes = 1 << 20
		dies := replaced(t, Script(s), ddHolder, `{ echo "dd: out of memory" >&2; exit 3; } > "$f" & eaters="$eaters $!"`)
		r := start(t, sh, dies)
		r.exits(t, 1, 10*time.Second)
		out := strings.TrimSpace(r.out.String())
		if strings.Contains(out, "holding") || strings.Contains(out, "held for") {
			t.Errorf("claimed to hold what it does not:\n%s", out)
		}
		lines := strings.Split(out, "\n")
		last := lines[len(lines)-1]
		if want := s.Name + ": allocation failed: memory holder 1 of 3 (dd, pid "; !strings.HasPrefix(last, want) ||
			!strings.HasSuffix(last, ") exited with status 3; its share is not held, so nothing is") {
			t.Errorf("the last line is not the reason: %q\n%s", last, out)
		}
	})
}

// A holder whose FIFO's reader is gone dies of SIGPIPE, and fails the run. dd has its share
// resident before it writes a byte, so the script may see the fill complete in the moment between
// the read and the SIGPIPE (CI did, once, under load): then it said "holding" truthfully and must
// say the memory is no longer held; otherwise the allocation failed. Either way, one line and exit 1.
func TestMemoryScriptFailsWhenTheReaderGoes(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		s := memSpec(t.TempDir(), 4<<20, 5*time.Second)
		broken := replaced(t, Script(s), `sleep $((deadline + 10)) < "$f" & keepers="$keepers $!"`,
			`head -c 1 < "$f" > /dev/null & keepers="$keepers $!"`)
		r := start(t, sh, broken)
		r.exits(t, 1, 10*time.Second)
		out := r.out.String()
		if strings.Contains(out, "held for") {
			t.Errorf("claimed a hold that did not last:\n%s", out)
		}
		if strings.Contains(out, "holding") {
			r.said(t, "memory is no longer held: memory holder 1 of 1 (dd, pid ")
			r.said(t, ") exited with status 141; its share is gone")
			return
		}
		r.said(t, "allocation failed: memory holder 1 of 1 (dd, pid ")
		r.said(t, ") exited with status 141; its share is not held, so nothing is")
	})
}

// A holder that dies during the hold (here: killed once "holding" is said) ends the run at the
// next second's check, with the holder named, and never says "held for".
func TestMemoryScriptFailsWhenAHolderDiesDuringTheHold(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		s := memSpec(t.TempDir(), 4<<20, 5*time.Second)
		r := start(t, sh, Script(s))
		var pid int
		eventually(t, "holding, with its one holder", r, func() bool {
			hs := holders(r.cmd.Process.Pid)
			if !strings.Contains(r.out.String(), "holding") || len(hs) != 1 {
				return false
			}
			pid = hs[0].pid
			return true
		})
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill holder %d: %v", pid, err)
		}
		r.exits(t, 1, 5*time.Second)
		if strings.Contains(r.out.String(), "held for") {
			t.Errorf("claimed a hold that did not last:\n%s", r.out)
		}
		r.said(t, "memory is no longer held: memory holder 1 of 1 (dd, pid "+strconv.Itoa(pid)+") exited with status ")
	})
}

// A deadline that comes between starting a holder and recording its PID is deferred until the PID
// is recorded, so cleanup still stops the holder. Before, the holder was left running (and, in a
// shared PID namespace, holding its memory after the run); a CI run hung on one, which kept the
// test's output pipe open.
func TestDeadlineWhileAHolderStartsStillStopsIt(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		s := memSpec(t.TempDir(), 1<<40, 30*time.Second)
		script := replaced(t, Script(s), ddHolder, `sleep 60 > "$f" & kill -USR1 $$; eaters="$eaters $!"; echo "worker pid $!"`)
		r := start(t, sh, script)
		r.exits(t, 124, 10*time.Second)
		r.said(t, "deadline of 30s reached during fill")
		gonePID(t, r)
	})
}
