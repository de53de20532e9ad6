package redact

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
)

// The typed half of the structural layer: what doctor's loader collects from each listed object
// before trimming it, so that the values are redacted wherever a message repeats them although
// the spec is gone. Object is the same layer over any object decoded into JSON's shapes (the
// bundle's, heal's evidence).

// AddContainers adds the secrets of containers: env values under secret names and the shapes of
// every env value, and each container's command and args read as one argv.
func (set Set) AddContainers(cs []corev1.Container) {
	for i := range cs {
		c := &cs[i]
		for _, e := range c.Env {
			if IsSecretName(e.Name) {
				set.Add(e.Value)
			}
			set.AddText(e.Value)
		}
		if len(c.Command)+len(c.Args) > 0 {
			set.AddArgv(append(append([]string(nil), c.Command...), c.Args...))
		}
	}
}

// AddPodSpec adds the secrets of a pod spec's containers.
func (set Set) AddPodSpec(p *corev1.PodSpec) {
	set.AddContainers(p.InitContainers)
	set.AddContainers(p.Containers)
	for i := range p.EphemeralContainers {
		set.AddContainers([]corev1.Container{corev1.Container(p.EphemeralContainers[i].EphemeralContainerCommon)})
	}
}

// AddClusterSpec adds the secrets of a RayCluster spec: its pod templates, start parameters and
// GCS fault tolerance options.
func (set Set) AddClusterSpec(spec *rayv1.RayClusterSpec) {
	if spec == nil {
		return
	}
	set.AddPodSpec(&spec.HeadGroupSpec.Template.Spec)
	set.addStartParams(spec.HeadGroupSpec.RayStartParams)
	for i := range spec.WorkerGroupSpecs {
		set.AddPodSpec(&spec.WorkerGroupSpecs[i].Template.Spec)
		set.addStartParams(spec.WorkerGroupSpecs[i].RayStartParams)
	}
	if ft := spec.GcsFaultToleranceOptions; ft != nil {
		set.AddText(ft.RedisAddress)
		if ft.RedisPassword != nil {
			set.Add(ft.RedisPassword.Value)
		}
		if ft.RedisUsername != nil {
			set.Add(ft.RedisUsername.Value)
		}
	}
}

func (set Set) addStartParams(params map[string]string) {
	for k, v := range params {
		if IsSecretName(k) {
			set.Add(v)
		}
		set.AddText(v)
	}
}

// AddRayJobSpec adds what a RayJob's spec holds: its entrypoint read as a command line, its
// runtimeEnvYAML by its structure, its cluster spec and submitter template.
func (set Set) AddRayJobSpec(spec *rayv1.RayJobSpec) {
	set.AddCommandLine(spec.Entrypoint)
	if err := set.AddEmbedded(spec.RuntimeEnvYAML); err != nil {
		set.AddText(spec.RuntimeEnvYAML)
	}
	set.AddClusterSpec(spec.RayClusterSpec)
	if spec.SubmitterPodTemplate != nil {
		set.AddPodSpec(&spec.SubmitterPodTemplate.Spec)
	}
}

// AddRayServiceSpec adds what a RayService's spec holds: its serveConfigV2 by its structure
// (each application's runtime_env, args and user_config) and its cluster spec.
func (set Set) AddRayServiceSpec(spec *rayv1.RayServiceSpec) {
	if err := set.AddEmbedded(spec.ServeConfigV2); err != nil {
		set.AddText(spec.ServeConfigV2)
	}
	set.AddClusterSpec(&spec.RayClusterSpec)
}
