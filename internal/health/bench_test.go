package health

import (
	"testing"
)

// deploymentLua is a Lua health check of typical size, the Deployment rules
// written as an argocd-cm customization would.
const deploymentLua = `
local hs = { status = "Progressing", message = "Waiting for rollout to finish" }
if obj.spec.paused then
  return { status = "Suspended", message = "Deployment is paused" }
end
if obj.status == nil or obj.metadata.generation > (obj.status.observedGeneration or 0) then
  return hs
end
if obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Progressing" and c.reason == "ProgressDeadlineExceeded" then
      return { status = "Degraded", message = "Deployment " .. obj.metadata.name .. " exceeded its progress deadline" }
    end
  end
end
local s = obj.status
if (s.updatedReplicas or 0) < (obj.spec.replicas or 1) or (s.availableReplicas or 0) < (s.updatedReplicas or 0) then
  return hs
end
return { status = "Healthy", message = "" }
`

func benchmarkAssess(b *testing.B, opts Options, fixture string, want Code) {
	a := newTestAssessor(b, opts)
	obj := readFixture(b, fixture)
	if got := a.Assess(obj); got.Status != want {
		b.Fatalf("Assess = %+v, want %s", got, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a.Assess(obj)
	}
}

func BenchmarkBuiltinDeployment(b *testing.B) {
	benchmarkAssess(b, Options{}, "builtin/deployment-healthy.yaml", Healthy)
}

func BenchmarkBuiltinPod(b *testing.B) {
	benchmarkAssess(b, Options{}, "builtin/pod-two-errors.yaml", Degraded)
}

func BenchmarkLuaDeployment(b *testing.B) {
	settings := map[string]string{KeyHealthPrefix + "apps_Deployment": deploymentLua}
	benchmarkAssess(b, Options{Settings: settings}, "builtin/deployment-healthy.yaml", Healthy)
}

func BenchmarkLuaDeploymentParallel(b *testing.B) {
	a := newTestAssessor(b, Options{Settings: map[string]string{KeyHealthPrefix + "apps_Deployment": deploymentLua}})
	obj := readFixture(b, "builtin/deployment-healthy.yaml")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a.Assess(obj)
		}
	})
}

func BenchmarkLuaLibrary(b *testing.B) {
	benchmarkAssess(b, Options{LibraryDir: "testdata/lua"}, "lua/example.com/Widget/testdata/ready.yaml", Healthy)
}

func BenchmarkLuaLibraryOpenLibs(b *testing.B) {
	settings := map[string]string{KeyOpenLibsPrefix + "example.com_Widget": "true"}
	benchmarkAssess(b, Options{LibraryDir: "testdata/lua", Settings: settings}, "lua/example.com/Widget/testdata/ready.yaml", Healthy)
}
