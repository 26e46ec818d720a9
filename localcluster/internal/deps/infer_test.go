package deps

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// serviceMap is a Services of namespace/name -> ports (none: expected).
type serviceMap map[string][]int32

func (m serviceMap) Lookup(namespace, name string) ([]int32, bool) {
	ports, ok := m[namespace+"/"+name]
	return ports, ok
}

func TestInfer(t *testing.T) {
	var fixture struct {
		Services serviceMap `json:"services"`
		Cases    map[string]struct {
			Namespace string           `json:"namespace"`
			Container corev1.Container `json:"container"`
			Want      []Requirement    `json:"want"`
		} `json:"cases"`
	}
	b, err := os.ReadFile("testdata/infer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, &fixture); err != nil {
		t.Fatal(err)
	}
	for name, tc := range fixture.Cases {
		t.Run(name, func(t *testing.T) {
			got := Infer(tc.Namespace, &tc.Container, fixture.Services)
			if diff := cmp.Diff(tc.Want, got, cmp.Comparer(func(a, b []Requirement) bool {
				return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b)
			})); diff != "" {
				t.Errorf("Infer() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRequires(t *testing.T) {
	tests := map[string]struct {
		value   string
		want    string // the requirements joined by ","
		wantErr string
	}{
		"one service":               {value: "redis.ns:6379", want: "ns/redis:6379"},
		"several with spaces":       {value: "redis.ns:6379, db.data:5432", want: "ns/redis:6379,data/db:5432"},
		"svc suffix":                {value: "redis.ns.svc:6379", want: "ns/redis:6379"},
		"cluster.local suffix":      {value: "redis.ns.svc.cluster.local:6379", want: "ns/redis:6379"},
		"empty value":               {value: " ", wantErr: "no entries"},
		"trailing comma":            {value: "redis.ns:6379,", wantErr: "entry 2 is empty"},
		"no port":                   {value: "redis.ns", wantErr: `entry "redis.ns": no port`},
		"port not a number":         {value: "redis.ns:http", wantErr: `entry "redis.ns:http": port "http" is not a number`},
		"port out of range":         {value: "redis.ns:70000", wantErr: `entry "redis.ns:70000": port "70000"`},
		"port zero":                 {value: "redis.ns:0", wantErr: `entry "redis.ns:0": port "0"`},
		"no namespace":              {value: "redis:6379", wantErr: `entry "redis:6379": host "redis": want <service>.<namespace>`},
		"too many dots":             {value: "a.b.c:1", wantErr: `entry "a.b.c:1": host "a.b.c"`},
		"service not a DNS label":   {value: "Redis.ns:6379", wantErr: `entry "Redis.ns:6379": service "Redis"`},
		"namespace not a DNS label": {value: "redis.n_s:6379", wantErr: `entry "redis.n_s:6379": namespace "n_s"`},
		"bad entry after good one":  {value: "redis.ns:6379,oops", wantErr: `entry "oops"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseRequires(tc.value, "the profile")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseRequires(%q) error = %v, want one containing %q", tc.value, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRequires(%q): %v", tc.value, err)
			}
			var s []string
			for _, r := range got {
				s = append(s, r.String())
				if r.Source != "the profile" {
					t.Errorf("source %q, want the profile", r.Source)
				}
			}
			if strings.Join(s, ",") != tc.want {
				t.Errorf("ParseRequires(%q) = %s, want %s", tc.value, strings.Join(s, ","), tc.want)
			}
		})
	}
}
