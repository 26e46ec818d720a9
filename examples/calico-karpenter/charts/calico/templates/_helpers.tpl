{{/* Calico runs on the cluster's EC2 nodes, never on Fargate. */}}
{{- define "calico.notFargate" -}}
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions:
            - {key: eks.amazonaws.com/compute-type, operator: NotIn, values: [fargate]}
{{- end }}
