local k = import 'k.libsonnet';
local params = import 'params.libsonnet';

function(name, replicas=1)
  [
    k.service(name, params.port),
    k.deployment(name, params.image, replicas, params.port) + {
      metadata+: { annotations: { 'example.com/cluster': std.extVar('cluster') } },
    },
  ]
