package artifact

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// EventTable renders Events as kubectl get events does, oldest first as given.
func EventTable(es []corev1.Event) []byte {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAST SEEN\tTYPE\tREASON\tOBJECT\tCOUNT\tMESSAGE")
	for i := range es {
		e := &es[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s/%s\t%d\t%s\n", EventTime(e).UTC().Format("2006-01-02T15:04:05Z"), e.Type, e.Reason,
			strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name, max(e.Count, 1), strings.ReplaceAll(e.Message, "\n", " "))
	}
	_ = tw.Flush()
	return []byte(b.String())
}

// EventTime is when an Event last happened: its last timestamp, its event time (events.k8s.io),
// or its creation.
func EventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
