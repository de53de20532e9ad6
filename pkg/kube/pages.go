package kube

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Page is one page of a LIST: its items and the token for the next page ("" after the last).
type Page[T any] struct {
	Items    []T
	Continue string
}

// ListPageFunc fetches one page of a LIST.
type ListPageFunc[T any] func(ctx context.Context, opts metav1.ListOptions) (Page[T], error)

// ListAll reads every item of a LIST in pages of PageSize, one request per page, and returns them
// in one slice allocated once at its final size: appending thousands of pods one by one copies
// them on every growth, which showed up as doctor's largest allocation at 5,000 pods.
// Field-manager bookkeeping is dropped as each page arrives: no rule reads it, and it is the
// bulk of a listed object. A continue token that expired mid-way (410) restarts the list
// unpaginated, as client-go's pager does.
func ListAll[T any, PT interface {
	*T
	metav1.Object
}](ctx context.Context, selector string, list ListPageFunc[T]) ([]T, error) {
	return ListAllWith[T, PT](ctx, metav1.ListOptions{LabelSelector: selector}, list)
}

// ListAllWith is ListAll with any list options (a field selector, say); Limit is PageSize
// unless opts sets one.
func ListAllWith[T any, PT interface {
	*T
	metav1.Object
}](ctx context.Context, opts metav1.ListOptions, list ListPageFunc[T]) ([]T, error) {
	return listGrowing[T, PT](ctx, opts, list, nil)
}

// listGrowing is ListAllWith whose page size after each page is next(the size asked for), when
// next is not nil.
func listGrowing[T any, PT interface {
	*T
	metav1.Object
}](ctx context.Context, opts metav1.ListOptions, list ListPageFunc[T], next func(int64) int64) ([]T, error) {
	var pages [][]T
	n := 0
	if opts.Limit == 0 {
		opts.Limit = PageSize
	}
	for {
		page, err := list(ctx, opts)
		if apierrors.IsResourceExpired(err) && opts.Continue != "" {
			pages, n = nil, 0
			opts.Continue, opts.Limit = "", 0
			continue
		}
		if err != nil {
			return nil, err
		}
		for i := range page.Items {
			PT(&page.Items[i]).SetManagedFields(nil)
		}
		pages = append(pages, page.Items)
		n += len(page.Items)
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
		if next != nil && opts.Limit > 0 {
			opts.Limit = next(opts.Limit)
		}
	}
	if len(pages) == 1 {
		return pages[0], nil
	}
	out := make([]T, 0, n)
	for _, p := range pages {
		out = append(out, p...)
	}
	return out, nil
}

// pagesOf is the ListPageFunc of a typed client's List: items picks a page's items out of the
// list type, and each (when not nil) is applied to every item as its page arrives, to trim it.
func pagesOf[T any, L interface{ GetContinue() string }](list func(context.Context, metav1.ListOptions) (L, error), items func(L) []T, each func(*T)) ListPageFunc[T] {
	return func(ctx context.Context, o metav1.ListOptions) (Page[T], error) {
		l, err := list(ctx, o)
		if err != nil {
			return Page[T]{}, err
		}
		page := items(l)
		if each != nil {
			for i := range page {
				each(&page[i])
			}
		}
		return Page[T]{Items: page, Continue: l.GetContinue()}, nil
	}
}

// MaxPodPageSize is the largest page of pods doctor asks for (PodPageLimit).
const MaxPodPageSize = 4000

// PodPageLimit is the size of the page of pods after a page of size prev: twice as large, up to
// MaxPodPageSize. At 20,000 pods, 500 a page was 40 requests of doctor's 56 (the doctor-at-scale
// bound asks for at most 30); growing pages take 8, and a small fleet still fits its first page of PageSize. The
// pages are read from the wire pod by pod (podPage), so a large one costs no more memory than
// its trimmed pods; the API server still builds each page in memory, hence the cap.
func PodPageLimit(prev int64) int64 {
	return min(prev*2, MaxPodPageSize)
}
