package ray

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// The operator's RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS is read as KubeRay v1.7.0 reads it: a
// positive integer of seconds, else 300.
func TestStatusCheckTimeout(t *testing.T) {
	dep := func(env ...corev1.EnvVar) appsv1.Deployment {
		d := appsv1.Deployment{}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "kuberay-operator", Image: "quay.io/kuberay/operator:v1.7.0", Env: env}}
		return d
	}
	for _, tc := range []struct {
		env  []corev1.EnvVar
		raw  string
		want time.Duration
	}{
		{nil, "", 300 * time.Second},
		{[]corev1.EnvVar{{Name: EnvJobStatusCheckTimeout, Value: "45"}}, "45", 45 * time.Second},
		{[]corev1.EnvVar{{Name: EnvJobStatusCheckTimeout, Value: "0"}}, "0", 300 * time.Second},
		{[]corev1.EnvVar{{Name: EnvJobStatusCheckTimeout, Value: "1m"}}, "1m", 300 * time.Second},
		{[]corev1.EnvVar{{Name: EnvJobStatusCheckTimeout, ValueFrom: &corev1.EnvVarSource{}}}, "", 300 * time.Second},
	} {
		ops := FindOperators([]appsv1.Deployment{dep(tc.env...)})
		if len(ops) != 1 || ops[0].JobStatusCheckTimeout != tc.raw || ops[0].StatusCheckTimeout() != tc.want {
			t.Errorf("env %v: got %+v, %v; want %q, %v", tc.env, ops, ops[0].StatusCheckTimeout(), tc.raw, tc.want)
		}
	}
}
