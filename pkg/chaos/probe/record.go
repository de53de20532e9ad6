package probe

import "time"

// Class says how a request ended. A request that got any HTTP response is ClassHTTP and its
// Record.Status holds the code; every other class is a failure below HTTP.
type Class uint8

const (
	ClassHTTP       Class = iota // an HTTP response arrived; see Record.Status
	ClassRefused                 // TCP connection refused (nothing listening, port-forward gone)
	ClassReset                   // connection reset or closed before a full response (EOF, EPIPE)
	ClassTimeout                 // no full response within the per-request timeout
	ClassDNS                     // the host name did not resolve
	ClassOther                   // any other transport error
	ClassNoEndpoint              // the endpoint set was empty at the scheduled time; nothing was sent
	ClassCanceled                // the run was stopped (Ctrl-C) while this request was in flight
	numClasses
)

var classNames = [numClasses]string{"http", "refused", "reset", "timeout", "dns", "other", "no-endpoint", "canceled"}

// String is the stable name used in reports and JSON.
func (c Class) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return "unknown"
}

// Classes lists every class in report order.
func Classes() []Class {
	out := make([]Class, 0, numClasses)
	for c := Class(0); c < numClasses; c++ {
		out = append(out, c)
	}
	return out
}

// Record is what the probe keeps about one request. It is 32 bytes (three int64 offsets, a uint16
// status, a uint16 endpoint index, a uint8 class, padding), so 1,000 req/s for 60 s keeps 1.9 MB.
// Times are offsets from Result.Start on the monotonic clock, so they are immune to wall-clock jumps.
type Record struct {
	// Scheduled is when the open-loop schedule said to send it: Seq / rate.
	Scheduled time.Duration
	// Sent is when it actually left (after picking an endpoint and a worker). Sent - Scheduled is
	// the probe's own schedule error, reported so nobody mistakes a slow probe for a slow server.
	Sent time.Duration
	// Latency runs from Scheduled (not Sent) to the end of the response body or the error, so a
	// stall in the probe or the server shows up in latency instead of being hidden (no coordinated
	// omission). Zero for ClassNoEndpoint.
	Latency time.Duration
	// Status is the HTTP status code when Class is ClassHTTP, else 0.
	Status uint16
	// Endpoint indexes Result.Endpoints; NoEndpoint when none was picked.
	Endpoint uint16
	Class    Class
}

// NoEndpoint is Record.Endpoint when the request never had a target.
const NoEndpoint = ^uint16(0)

// Done is Scheduled + Latency: when the outcome was known.
func (r Record) Done() time.Duration { return r.Scheduled + r.Latency }

// OK is true for a 2xx or 3xx answer (redirects are not followed; a 3xx is the server's answer).
func (r Record) OK() bool { return r.Class == ClassHTTP && r.Status >= 200 && r.Status < 400 }

// Outcome is how a request counts, the one classification the live counters, the report's
// totals and its per-second rows all use.
type Outcome uint8

const (
	Aborted   Outcome = iota // canceled in flight (Ctrl-C): not judged, counted apart
	Succeeded                // a 2xx or 3xx answer
	HTTPError                // an answer with status 400 or more
	TimedOut                 // no full answer within the request timeout
	ConnError                // refused, reset, DNS, another transport error, or no endpoint
)

// Outcome is how r counts.
func (r Record) Outcome() Outcome {
	switch {
	case r.Class == ClassCanceled:
		return Aborted
	case r.OK():
		return Succeeded
	case r.Class == ClassHTTP:
		return HTTPError
	case r.Class == ClassTimeout:
		return TimedOut
	}
	return ConnError
}
