package ray

// ServeServiceName is the Service a RayService's traffic goes through.
func ServeServiceName(rayService string) string { return rayService + "-serve-svc" }
