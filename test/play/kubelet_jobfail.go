package play

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"
)

// KubeletJobPodsFailYAML plays, for the Job pods of namespace ns only, a kubelet whose container
// exits with code: a Running pod owned by a Job turns Failed, every container terminated with
// reason Error. kwok's own pod-complete Stage turns such pods Succeeded; this one has weight 1
// against its 0, and kwok picks among matching Stages by weight, so it always wins in ns.
func KubeletJobPodsFailYAML(ns string, code int) string {
	return stageHead("kubectl-ray-job-fail-"+ns, ns) + fmt.Sprintf(`    - key: '.metadata.ownerReferences.[].kind'
      operator: 'In'
      values: ['Job']
  weight: 1
  next:
    statusTemplate: |
      {{ $now := Now }}
      phase: Failed
      conditions:
`+failedContainersYAML+`            exitCode: %d
            reason: Error
            startedAt: {{ $now | Quote }}
            finishedAt: {{ $now | Quote }}
      {{ end }}
`, code)
}

// KubeletJobPodsFail creates the Stage of KubeletJobPodsFailYAML and returns a function that
// deletes it (Stages are cluster-scoped: they outlive a namespace).
func KubeletJobPodsFail(ctx context.Context, admin *rest.Config, ns string, code int) (remove func(context.Context) error, err error) {
	return createStages(ctx, admin, KubeletJobPodsFailYAML(ns, code))
}
