package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

func TestClassify(t *testing.T) {
	op := func(err error) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	for _, c := range []struct {
		err  error
		want Class
	}{
		{nil, ClassHTTP},
		{op(syscall.ECONNREFUSED), ClassRefused},
		{op(syscall.ECONNRESET), ClassReset},
		{fmt.Errorf("Get: %w", io.EOF), ClassReset},
		{context.DeadlineExceeded, ClassTimeout},
		{&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, ClassDNS},
		{&net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}, ClassTimeout},
		{errors.New("tls: handshake failure"), ClassOther},
	} {
		if got := classify(c.err); got != c.want {
			t.Errorf("classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestRecordSize(t *testing.T) {
	if s := unsafe.Sizeof(Record{}); s != 32 {
		t.Fatalf("Record is %d bytes; the doc comment and docs/performance.md say 32", s)
	}
}

func TestRecordOutcome(t *testing.T) {
	for _, c := range []struct {
		rec  Record
		want Outcome
	}{
		{Record{Class: ClassHTTP, Status: 200}, Succeeded},
		{Record{Class: ClassHTTP, Status: 302}, Succeeded},
		{Record{Class: ClassHTTP, Status: 404}, HTTPError},
		{Record{Class: ClassHTTP, Status: 502}, HTTPError},
		{Record{Class: ClassTimeout}, TimedOut},
		{Record{Class: ClassRefused}, ConnError},
		{Record{Class: ClassNoEndpoint}, ConnError},
		{Record{Class: ClassCanceled}, Aborted},
	} {
		if got := c.rec.Outcome(); got != c.want {
			t.Errorf("%+v: outcome %d, want %d", c.rec, got, c.want)
		}
	}
}
