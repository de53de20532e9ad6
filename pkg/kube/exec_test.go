package kube

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/kubectl-ray/kubectl-ray/pkg/fault"
)

// Why an exec of tar failed, in the words a bundle's index gives: refused (the verb and
// resource), no tar in the image (busybox's sh and the runtime say it differently), no such
// directory (GNU and busybox tar), tar's own error, or a kubelet that does not exec.
func TestExplainExec(t *testing.T) {
	req := Request{Verb: "create", Resource: "pods/exec", Namespace: "ml", Name: "h"}
	for _, c := range []struct {
		err    error
		stderr string
		want   string
		is     error
	}{
		{apierrors.NewForbidden(schema.GroupResource{Resource: "pods/exec"}, "h", nil), "", `forbidden: you cannot create pods/exec in namespace "ml"`, nil},
		{fmt.Errorf(`command terminated: OCI runtime exec failed: exec: "tar": executable file not found in $PATH`), "", "has no tar", ErrNoTar},
		{utilexec.CodeExitError{Err: errors.New("exit 127"), Code: 127}, "sh: tar: not found", "has no tar", ErrNoTar},
		{utilexec.CodeExitError{Err: errors.New("exit 2"), Code: 2}, "tar: /tmp/ray/session_latest/logs: Cannot open: No such file or directory", "no such directory in the container: /d", ErrNoDir},
		{utilexec.CodeExitError{Err: errors.New("exit 1"), Code: 1}, "tar: can't change directory to '/d': No such file or directory", "no such directory", ErrNoDir},
		{utilexec.CodeExitError{Err: errors.New("exit 1"), Code: 1}, "tar: short write\nmore", "tar exited 1: tar: short write", nil},
		{errors.New("error dialing backend: dial tcp 127.0.0.1:10250: connect: connection refused"), "", "could not exec through the node's kubelet", nil},
	} {
		got := explainExec(c.err, c.stderr, "/d", req)
		if !strings.Contains(got.Error(), c.want) || c.is != nil && !errors.Is(got, c.is) {
			t.Errorf("explainExec(%v, %q) = %v, want %q", c.err, c.stderr, got, c.want)
		}
	}
	if got := explainExec(apierrors.NewForbidden(schema.GroupResource{Resource: "pods/exec"}, "h", nil), "", "/d", req); fault.KindOf(got) != fault.Forbidden {
		t.Errorf("a refused exec is not Forbidden: %v", got)
	}
}

// The stream is kept up to the limit; the write that reaches it ends the stream once.
func TestCappedBuffer(t *testing.T) {
	calls := 0
	b := &cappedBuffer{limit: 5, full: func() { calls++ }}
	b.Write([]byte("abc"))
	b.Write([]byte("defg"))
	b.Write([]byte("h"))
	if b.buf.String() != "abcde" || !b.cut || calls != 1 {
		t.Errorf("kept %q cut=%v full called %d times", b.buf.String(), b.cut, calls)
	}
	all := &cappedBuffer{}
	all.Write([]byte("abcdefgh"))
	if all.buf.String() != "abcdefgh" || all.cut {
		t.Errorf("no limit: %q %v", all.buf.String(), all.cut)
	}
}
