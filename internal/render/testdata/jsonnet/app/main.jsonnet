// Top-level arguments, external variables, an import next to the file,
// one from a library folder and an importstr.
local params = import 'params.libsonnet';
local k = import 'k/k.libsonnet';

function(image, replicas=1, labels={})
  [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: params.name, labels: labels { env: std.extVar('env') } },
      spec: {
        replicas: replicas,
        template: { spec: { containers: [{ name: params.name, image: image, ports: [{ containerPort: params.port }] }] } },
      },
    },
    k.configMap(params.name + '-config', { 'notes.txt': importstr 'notes.txt', limit: std.toString(std.extVar('limit') * 2) }),
  ]
