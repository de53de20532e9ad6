package kube

import "context"

// Ping asks the API server's /readyz: the cheapest request that shows it answers and is ready
// to serve. Every client may read it (ClusterRole system:public-info-viewer), so it needs no
// RBAC of its own.
func (c *Clients) Ping(ctx context.Context) error {
	return c.Kube.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
}
