// Package ray is what kubectl ray knows about the objects KubeRay makes: the labels it puts on
// pods, which pod is a head, what a node's conditions say about the pods on it, and how users
// name a RayCluster, RayService, RayJob or pod on the command line. diagnose, repair, kube and
// chaos all read it from here, so they cannot drift apart.
package ray
