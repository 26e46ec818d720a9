{{- define "aws-load-balancer-controller.labels" -}}
app.kubernetes.io/name: aws-load-balancer-controller
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}
{{- define "aws-load-balancer-controller.selector" -}}
app.kubernetes.io/name: aws-load-balancer-controller
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
{{- define "aws-load-balancer-controller.webhookService" -}}
aws-load-balancer-webhook-service
{{- end }}
