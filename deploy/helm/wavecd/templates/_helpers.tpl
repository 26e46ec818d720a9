{{/*
Names. Object names start with the fullname: the release name, or
<release>-wavecd when the release name does not contain the chart name.
*/}}
{{- define "wavecd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "wavecd.fullname" -}}
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

{{- define "wavecd.controller.fullname" -}}
{{- printf "%s-controller" (include "wavecd.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "wavecd.server.fullname" -}}
{{- printf "%s-server" (include "wavecd.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "wavecd.controller.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "wavecd.controller.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "wavecd.server.serviceAccountName" -}}
{{- if .Values.server.serviceAccount.create -}}
{{- default (include "wavecd.server.fullname" .) .Values.server.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.server.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "wavecd.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
Labels. Call with (dict "ctx" $ "component" "controller"); "partOf" and
"name" override app.kubernetes.io/part-of and app.kubernetes.io/name (Argo
CD's settings objects are part of "argocd" and named after themselves).
helm.sh/chart and app.kubernetes.io/managed-by are the only Helm-specific
labels: the kustomize base is this chart's output without them.
*/}}
{{- define "wavecd.selectorLabels" -}}
app.kubernetes.io/name: {{ default (include "wavecd.name" .ctx) .name }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "wavecd.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "wavecd.selectorLabels" . }}
app.kubernetes.io/part-of: {{ default "wavecd" .partOf }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
{{- end -}}

{{/*
Pod metadata of a component: (dict "ctx" $ "component" "controller" "values" .Values.controller).
*/}}
{{- define "wavecd.podMetadata" -}}
{{- $annotations := merge (deepCopy (default dict .values.podAnnotations)) (default dict .ctx.Values.global.podAnnotations) -}}
{{- $labels := merge (deepCopy (default dict .values.podLabels)) (default dict .ctx.Values.global.podLabels) -}}
metadata:
  {{- with $annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  labels:
    {{- include "wavecd.selectorLabels" (dict "ctx" .ctx "component" .component) | nindent 4 }}
    {{- with $labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}

{{/*
Pod placement of a component: its own nodeSelector, tolerations and affinity, else global's.
*/}}
{{- define "wavecd.podPlacement" -}}
{{- with (default .ctx.Values.global.nodeSelector .values.nodeSelector) }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default .ctx.Values.global.tolerations .values.tolerations) }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default .ctx.Values.global.affinity .values.affinity) }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .ctx.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
The command lines. Every flag the chart passes to the binary is here, so a
flag change touches one place (deploy/pods_test.go checks each against the
binary's own flag set). --namespace is the pod's own, from the downward API
(wavecd.podNamespaceEnv): the Kustomize base made from this output then
follows an overlay's namespace.
*/}}
{{- define "wavecd.podNamespaceEnv" -}}
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- end -}}

{{- define "wavecd.controller.args" -}}
- controller
- --namespace=$(POD_NAMESPACE)
- --listen=:{{ .Values.controller.containerPort }}
- --cache-dir=/var/cache/wavecd
- --plugins-dir=/home/argocd/cmp-server/plugins
{{- with (index .Values.configs.params "controller.status.processors") }}
- --workers={{ . }}
{{- end }}
{{- with (index .Values.configs.params "controller.operation.processors") }}
- --operation-processors={{ . }}
{{- end }}
{{- with (index .Values.configs.params "application.namespaces") }}
- --application-namespaces={{ . }}
{{- end }}
{{- if .Values.controller.argoParity }}
- --argo-parity
{{- end }}
{{- if include "wavecd.controller.sharded" . }}
- --sharding
- --shard-replicas={{ .Values.controller.replicas }}
- --replica-id=$(POD_NAME)
{{- end }}
{{- if not .Values.notifications.enabled }}
- --notifications=false
{{- end }}
{{- range .Values.controller.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/*
"true" when the controller shards its apps: controller.sharding, else
more than one replica.
*/}}
{{- define "wavecd.controller.sharded" -}}
{{- $c := .Values.controller -}}
{{- if kindIs "invalid" $c.sharding -}}
{{- if gt (int $c.replicas) 1 }}true{{ end -}}
{{- else if $c.sharding -}}
true
{{- end -}}
{{- end -}}

{{- define "wavecd.server.args" -}}
- server
- --namespace=$(POD_NAMESPACE)
- --listen=:{{ .Values.server.containerPort }}
- --cache-dir=/var/cache/wavecd
{{- with (index .Values.configs.params "application.namespaces") }}
- --application-namespaces={{ . }}
{{- end }}
{{- if eq (include "wavecd.server.insecure" .) "true" }}
- --insecure
{{- end }}
{{- range .Values.server.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/* "true" when the server serves plain HTTP (server.insecure, or configs.params server.insecure). */}}
{{- define "wavecd.server.insecure" -}}
{{- $param := index .Values.configs.params "server.insecure" -}}
{{- if or .Values.server.insecure (eq (toString $param) "true") -}}true{{- else -}}false{{- end -}}
{{- end -}}

{{/* configs.params keys the chart turns into flags. */}}
{{- define "wavecd.knownParams" -}}
{{- list "server.insecure" "controller.status.processors" "controller.operation.processors" "application.namespaces" | toJson -}}
{{- end -}}

{{/* Probes: (dict "path" "/healthz" "scheme" "HTTP" "probe" .Values.controller.livenessProbe). */}}
{{- define "wavecd.probe" -}}
httpGet:
  path: {{ .path }}
  port: http
  scheme: {{ .scheme }}
initialDelaySeconds: {{ .probe.initialDelaySeconds }}
periodSeconds: {{ .probe.periodSeconds }}
timeoutSeconds: {{ .probe.timeoutSeconds }}
failureThreshold: {{ .probe.failureThreshold }}
{{- end -}}

{{/* Checks of values that would render a broken install. */}}
{{- define "wavecd.validate" -}}
{{- if and .Values.rbac.namespaced (not .Values.rbac.managedNamespaces) -}}
{{- fail "rbac.namespaced is true but rbac.managedNamespaces is empty: list the namespaces the controller may manage" -}}
{{- end -}}
{{- if and .Values.server.enabled .Values.server.ingress.enabled (not .Values.server.ingress.hosts) -}}
{{- fail "server.ingress.enabled is true but server.ingress.hosts is empty: list the host names to route" -}}
{{- end -}}
{{- if lt (int .Values.controller.replicas) 1 -}}
{{- fail "controller.replicas must be at least 1" -}}
{{- end -}}
{{- end -}}

{{/*
One ConfigMap data entry: (dict "key" $key "value" $value). Multi-line text
prints as a literal block with the same content (a Lua health check stays
readable); anything a block cannot hold exactly is quoted.
*/}}
{{- define "wavecd.dataEntry" -}}
{{- $v := toString .value -}}
{{- $body := trimSuffix "\n" $v -}}
{{- if and (contains "\n" $v) (not (hasSuffix "\n" $body)) (not (hasPrefix " " $v)) (not (contains "\r" $v)) (not (contains "\t" $v)) -}}
{{ .key }}: {{ if hasSuffix "\n" $v }}|{{ else }}|-{{ end }}
  {{- $body | nindent 2 }}
{{- else -}}
{{ .key }}: {{ $v | quote }}
{{- end -}}
{{- end -}}
