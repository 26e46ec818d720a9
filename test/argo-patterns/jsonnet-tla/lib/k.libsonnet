// A small ksonnet-style library, imported through `libs`.
{
  deployment(name, image, replicas, port):: {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: name, labels: { app: name } },
    spec: {
      replicas: replicas,
      revisionHistoryLimit: 3,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: name, image: image, ports: [{ containerPort: port }] }] },
      },
    },
  },
  service(name, port):: {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: name },
    spec: { selector: { app: name }, ports: [{ port: port, targetPort: port }] },
  },
}
