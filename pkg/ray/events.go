package ray

// EventFieldSelector selects the Events doctor reads: those about RayClusters, where the operator
// records what it does to a cluster's pods and the pods it could not create, without the
// creations that every healthy cluster records once per pod and Service (a fleet of 1,000
// clusters holds thousands of them, and no rule reads them). One paged LIST with it per doctor run; what is left in a healthy fleet is
// close to nothing, and the page filter (KeepEvent) drops the rest of what rules do not read.
const EventFieldSelector = "involvedObject.kind=RayCluster," +
	"reason!=Created,reason!=CreatedHeadPod,reason!=CreatedWorkerPod,reason!=CreatedService,reason!=DeletedWorkerPod"

// WarningFieldSelector selects the Events doctor reads about RayJobs and RayServices: the
// operator's Warnings about ray.io objects other than RayClusters (whose Events EventFieldSelector
// reads). KubeRay v1.5.0 and v1.6.0 record them (rayjob_controller.go, rayservice_controller.go);
// v1.1.1 records none about either, so there the rules fall back to what the status says. One
// paged LIST per doctor run, filtered by KeepWarning as pages arrive.
const WarningFieldSelector = "type=Warning,involvedObject.apiVersion=ray.io/v1,involvedObject.kind!=RayCluster"
