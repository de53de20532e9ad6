{{/* The chart's name. */}}
{{- define "watchdog.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The objects' name: fullnameOverride, else the release name (with the chart's name if it lacks it). */}}
{{- define "watchdog.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "watchdog.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "watchdog.selectorLabels" -}}
app.kubernetes.io/name: {{ include "watchdog.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "watchdog.labels" -}}
{{ include "watchdog.selectorLabels" . }}
helm.sh/chart: {{ include "watchdog.chart" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "watchdog.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "watchdog.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* repository:tag[@digest]; the tag defaults to the chart's appVersion, the release's tag. */}}
{{- define "watchdog.image" -}}
{{- $ref := printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- if .Values.image.digest -}}
{{- $ref = printf "%s@%s" $ref .Values.image.digest -}}
{{- end -}}
{{- $ref -}}
{{- end -}}

{{/* Leader election on the Lease kubectl-ray-heal (a fixed name: the watchdog's) when more than one replica runs. */}}
{{- define "watchdog.leaderElect" -}}
{{- if gt (int .Values.replicas) 1 }}true{{ end -}}
{{- end -}}

{{/*
The watchdogs, one a Deployment: the watchdog watches one namespace or all. Each item is its
Deployment's name, the namespace it watches ("" for all) and its Lease's namespace.
*/}}
{{- define "watchdog.instances" -}}
{{- $full := include "watchdog.fullname" . -}}
{{- if .Values.watchNamespaces }}
{{- range .Values.watchNamespaces }}
- name: {{ printf "%s-%s" $full . | trunc 63 | trimSuffix "-" }}
  watch: {{ . }}
  lease: {{ . }}
{{- end }}
{{- else }}
- name: {{ $full }}
  watch: ""
  lease: {{ $.Release.Namespace }}
{{- end }}
{{- end -}}

{{/*
The rules of what the watchdog reads and deletes (docs/heal.md "In-cluster" says what each is for).
hack/chart's TestWatchdogRBAC removes each verb in turn and fails unless the watchdog then says
forbidden: add a verb here only with the code that uses it.
*/}}
{{- define "watchdog.rules" -}}
# get pods, get pods/log: before each delete, the pod read whole and its log tails, kept in the
# watchdog's log (evidence, docs/heal.md).
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch", "delete"]
- apiGroups: [""]
  resources: ["pods/log"]
  verbs: ["get"]
- apiGroups: ["ray.io"]
  resources: ["rayclusters"]
  verbs: ["list", "watch"]
# create: each delete and each back-off is recorded; list/watch: the operator's head Events,
# to back off on a head recreate loop (kuberay #4272), and the Events kept as a pod's evidence.
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "list", "watch"]
{{- end -}}

{{/* Only --force reads nodes: it force-deletes only heads on a NotReady, unreachable or gone node. */}}
{{- define "watchdog.nodeRules" -}}
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["list", "watch"]
{{- end -}}
