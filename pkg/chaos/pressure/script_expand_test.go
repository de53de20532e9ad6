package pressure

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The kubelet does not hand a container's command to the runtime as written: it expands $(VAR)
// references and turns $$ into $ (k8s.io/kubernetes third_party/forked/golang/expansion, applied
// to the command and args of every container, ephemeral ones included). On a real node the
// scripts' `kill -USR1 $$` became `kill -USR1 $`, and the deadline never arrived. These tests apply
// the same rules to Container(s).Command and run what comes out of them.

// kubeExpand is a faithful copy of that package's Expand with MappingFuncFor(vars): $$ becomes $,
// $(NAME) becomes vars[NAME] when NAME is defined and stays as written when not, and any other $
// (a lone one at the end, an unclosed $( included) is kept.
func kubeExpand(in string, vars map[string]string) string {
	var b strings.Builder
	checkpoint := 0
	for i := 0; i < len(in); i++ {
		if in[i] != '$' || i+1 >= len(in) {
			continue
		}
		b.WriteString(in[checkpoint:i])
		read, isVar, advance := kubeReadVariable(in[i+1:])
		switch v, defined := vars[read]; {
		case isVar && defined:
			b.WriteString(v)
		case isVar:
			b.WriteString("$(" + read + ")")
		default:
			b.WriteString(read)
		}
		i += advance
		checkpoint = i + 1
	}
	return b.String() + in[checkpoint:]
}

// kubeReadVariable reads what follows a $: another $ (the escape), a (NAME) reference, or anything
// else, which is kept with its $.
func kubeReadVariable(in string) (read string, isVar bool, advance int) {
	switch in[0] {
	case '$':
		return "$", false, 1
	case '(':
		for i := 1; i < len(in); i++ {
			if in[i] == ')' {
				return in[1:i], true, i + 1
			}
		}
		return "$(", false, 1
	}
	return "$" + in[:1], false, 1
}

func kubeExpandAll(argv []string, vars map[string]string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = kubeExpand(a, vars)
	}
	return out
}

// The copy agrees with Kubernetes' own test vectors (expand_test.go of that package).
func TestKubeExpandIsKubernetes(t *testing.T) {
	vars := map[string]string{"VAR_A": "A", "VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)", "VAR_EMPTY": ""}
	for in, want := range map[string]string{
		"$(VAR_A)":           "A",
		"___$(VAR_B)___":     "___B___",
		"$$(VAR_B)_$(VAR_A)": "$(VAR_B)_A",
		"f000-$$VAR_A":       "f000-$VAR_A",
		"$(VAR_A$(VAR_B))":   "$(VAR_A$(VAR_B))",
		"$(VAR_REF)":         "$(VAR_A)",
		"foo$(VAR_EMPTY)bar": "foobar",
		"foo$(VAR_Awhoops!":  "foo$(VAR_Awhoops!",
		"$?_boo_$!":          "$?_boo_$!",
		"$VAR_A":             "$VAR_A",
		"$(VAR_DNE)":         "$(VAR_DNE)",
		"$$$$$$(BIG_MONEY)":  "$$$(BIG_MONEY)",
		"$$$$$$$(VAR_A)":     "$$$A",
		"${VAR_A}":           "${VAR_A}",
		"$(VAR_C)_______$(":  "C_______$(",
		"$(VAR_A)foobarzab$": "Afoobarzab$",
		"--$($($($($--":      "--$($($($($--",
		"$(foo$$var)":        "$(foo$$var)",
	} {
		if got := kubeExpand(in, vars); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

// pressureSpecs are the specs of the container goldens: every variant of both scripts.
func pressureSpecs(t *testing.T) []Spec {
	t.Helper()
	var out []Spec
	for _, o := range []Options{
		{Kind: Disk, Amount: "10Gi", Duration: 2 * time.Minute, Suffix: "abcde"},
		{Kind: Disk, Fill: FillContainer, Percent: 80, Duration: 2 * time.Minute, Suffix: "abcde"},
		{Kind: Disk, Fill: FillNode, Percent: 95, Duration: 90 * time.Second, Suffix: "abcde"},
		{Kind: Memory, Percent: 90, Duration: 2 * time.Minute, Suffix: "abcde"},
		{Kind: Memory, Amount: "2Gi", Duration: time.Minute, Suffix: "q1w2e"},
	} {
		s, err := Plan(headPod(), o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// What the shell gets after the kubelet's expansion is the script, byte for byte: with no
// variables, and with every name the script could be mistaken to reference defined.
func TestContainerCommandSurvivesKubernetesExpansion(t *testing.T) {
	for _, s := range pressureSpecs(t) {
		cmd := Container(s).Command
		want := []string{"/bin/sh", "-c", Script(s)}
		if !strings.Contains(want[2], "$$") {
			t.Fatalf("%s: the script has no $$; this test would not notice the expansion", s.Name)
		}
		hostile := map[string]string{}
		for _, part := range strings.Split(want[2], "$(")[1:] {
			if name, _, ok := strings.Cut(part, ")"); ok {
				hostile[name] = "EXPANDED"
			}
		}
		for _, vars := range []map[string]string{nil, hostile} {
			if got := kubeExpandAll(cmd, vars); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Errorf("%s: the command after expansion (%d names defined) is not the script:\n%s", s.Name, len(vars), got[len(got)-1])
			}
		}
		if kubeExpand(want[2], nil) == want[2] {
			t.Errorf("%s: the plain script survives expansion, so the escape is not being tested", s.Name)
		}
	}
}

// startExpanded runs Container(s).Command as the kubelet would hand it to the runtime (expanded),
// with sh as its /bin/sh.
func startExpanded(t *testing.T, sh shell, s Spec, attr *syscall.SysProcAttr) *run {
	t.Helper()
	argv := kubeExpandAll(Container(s).Command, nil)
	cmd := exec.Command(sh.sh, argv[1:]...)
	cmd.SysProcAttr = attr
	return startCmd(t, cmd, sh)
}

// The deadline's USR1 reaches the script after the expansion: the hold ends by it ("held for").
func TestExpandedCommandHoldsUntilTheDeadline(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		for _, s := range []Spec{diskSpec(t.TempDir(), 1<<20, 2*time.Second), memSpec(t.TempDir(), 4<<20, 2*time.Second)} {
			r := startExpanded(t, sh, s, nil)
			r.exits(t, 0, 12*time.Second)
			r.said(t, "held for 2s")
			if strings.Contains(r.out.String(), "invalid number") || strings.Contains(r.out.String(), "illegal number") {
				t.Errorf("the shell could not read a PID:\n%s", r.out)
			}
		}
	})
}

// --fill container refuses when the script is PID 1 (no shared PID namespace): `[ "$$" = 1 ]` must
// compare the shell's own PID after the expansion. Run in a PID namespace of its own, the shell
// is PID 1, as it would be in a container that does not see the target's processes.
func TestExpandedCommandSeesItsOwnPID(t *testing.T) {
	eachShell(t, func(t *testing.T, sh shell) {
		dir := t.TempDir()
		s := diskSpec(dir, 1<<20, 5*time.Second)
		s.Fill = FillContainer
		// The target's directory exists: a script that missed the check would write and exit 0.
		if err := os.MkdirAll(filepath.Join(dir, "root", "tmp"), 0o755); err != nil {
			t.Fatal(err)
		}
		probe := exec.Command(sh.sh, "-c", "true")
		probe.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
		if err := probe.Run(); err != nil {
			t.Skipf("cannot start a process in a new PID namespace here (%v): the PID 1 check is not run", err)
		}
		r := startExpanded(t, sh, s, &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID})
		r.exits(t, 2, 10*time.Second)
		r.said(t, "the target container's processes are not visible (no shared PID namespace)")
	})
}
