package kube

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakePods serves n pods in pages as the API server does: Limit items from the offset the
// continue token names, recording each page size asked for.
func fakePods(n int, asked *[]int64) ListPageFunc[corev1.Pod] {
	return func(_ context.Context, o metav1.ListOptions) (Page[corev1.Pod], error) {
		*asked = append(*asked, o.Limit)
		from := 0
		if o.Continue != "" {
			from, _ = strconv.Atoi(o.Continue)
		}
		to := n
		if o.Limit > 0 {
			to = min(n, from+int(o.Limit))
		}
		var p Page[corev1.Pod]
		for i := from; i < to; i++ {
			p.Items = append(p.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p-", i)}})
		}
		if to < n {
			p.Continue = strconv.Itoa(to)
		}
		return p, nil
	}
}

// Pages of pods double from PageSize up to MaxPodPageSize, and every pod comes once, in order.
func TestPodPagesGrow(t *testing.T) {
	for _, c := range []struct {
		pods int
		want []int64
	}{
		{300, []int64{500}},
		{5000, []int64{500, 1000, 2000, 4000}},
		{20000, []int64{500, 1000, 2000, 4000, 4000, 4000, 4000, 4000}},
	} {
		var asked []int64
		pods, err := listGrowing(context.Background(), metav1.ListOptions{Limit: PageSize}, fakePods(c.pods, &asked), PodPageLimit)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(asked, c.want) {
			t.Errorf("%d pods: page sizes %v, want %v", c.pods, asked, c.want)
		}
		if len(pods) != c.pods || pods[0].Name != "p-0" || pods[len(pods)-1].Name != fmt.Sprint("p-", c.pods-1) {
			t.Errorf("%d pods: got %d", c.pods, len(pods))
		}
	}
}

// A continue token that expired mid-way restarts the list whole, in one request, as client-go's
// pager does; the pages read before it are not kept twice.
func TestPodPagesRestartWhenExpired(t *testing.T) {
	var asked []int64
	pages := fakePods(3000, &asked)
	expired := false
	list := func(ctx context.Context, o metav1.ListOptions) (Page[corev1.Pod], error) {
		if o.Continue != "" && !expired {
			expired = true
			asked = append(asked, o.Limit)
			return Page[corev1.Pod]{}, apierrors.NewResourceExpired("too old")
		}
		return pages(ctx, o)
	}
	pods, err := listGrowing(context.Background(), metav1.ListOptions{Limit: PageSize}, list, PodPageLimit)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{500, 1000, 0}; !slices.Equal(asked, want) || len(pods) != 3000 {
		t.Fatalf("page sizes %v (want %v), %d pods", asked, want, len(pods))
	}
}
