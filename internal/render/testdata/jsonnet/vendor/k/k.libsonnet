{
  configMap(name, data):: {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: name },
    data: data,
  },
}
