package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RayNames lists the names of RayClusters and RayServices in namespace ("" for all), for shell
// completion of doctor's NAME argument. One LIST each; an error yields what was read.
func (c *Clients) RayNames(ctx context.Context, namespace string) (clusters, services []string) {
	if l, err := c.Ray.RayV1().RayClusters(namespace).List(ctx, metav1.ListOptions{Limit: PageSize}); err == nil {
		for _, rc := range l.Items {
			clusters = append(clusters, rc.Name)
		}
	}
	if l, err := c.Ray.RayV1().RayServices(namespace).List(ctx, metav1.ListOptions{Limit: PageSize}); err == nil {
		for _, rs := range l.Items {
			services = append(services, rs.Name)
		}
	}
	return clusters, services
}
