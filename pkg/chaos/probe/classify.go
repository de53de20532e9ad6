package probe

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// classify maps a transport error to a Class. Order matters: a timeout wraps other errors, and a
// dial error can wrap a DNS error.
func classify(err error) Class {
	if err == nil {
		return ClassHTTP
	}
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr):
		if dnsErr.IsTimeout {
			return ClassTimeout
		}
		return ClassDNS
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return ClassTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return ClassRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNABORTED):
		return ClassReset
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ClassTimeout
	}
	return ClassOther
}
