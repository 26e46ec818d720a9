// shared.libsonnet is in the source folder and in the library folder:
// the library folder (the last search path) wins.
local params = import '../params.libsonnet';
local shared = import 'shared.libsonnet';
function(image, replicas=1, labels={}) [
  [{ apiVersion: 'v1', kind: 'Service', metadata: { name: params.name, annotations: { from: shared.from } }, spec: { ports: [{ port: params.port }] } }],
  null,
  { apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: params.name } }] },
]
