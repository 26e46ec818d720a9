{{/* Pod annotations that make a pod take its time to be Ready. */}}
{{- define "calico.delay" -}}
pod-ready.stage.kwok.x-k8s.io/delay: {{ .delay | quote }}
pod-ready.stage.kwok.x-k8s.io/jitter-delay: {{ .jitter | quote }}
{{- end }}

{{/* Calico runs on the cluster's EC2 nodes, never on Fargate. */}}
{{- define "calico.notFargate" -}}
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions:
            - {key: eks.amazonaws.com/compute-type, operator: NotIn, values: [fargate]}
{{- end }}
