package rbac

import (
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

type enforceCase struct {
	Name      string                `json:"name"`
	RBAC      map[string]string     `json:"rbac"`
	Projects  []v1alpha1.AppProject `json:"projects"`
	WantError bool                  `json:"wantError"`
	Subject   Subject               `json:"subject"`
	Checks    []struct {
		Resource string `json:"resource"`
		Action   string `json:"action"`
		Object   string `json:"object"`
		Want     bool   `json:"want"`
	} `json:"checks"`
}

func TestEnforcer(t *testing.T) {
	raw, err := os.ReadFile("testdata/enforce.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []enforceCase
	if err := yaml.UnmarshalStrict(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			cfg, err := ConfigFromData(tc.RBAC)
			var projects []Policy
			for i := range tc.Projects {
				p, perr := ProjectPolicy(&tc.Projects[i])
				if err == nil {
					err = perr
				}
				projects = append(projects, p)
			}
			if (err != nil) != tc.WantError {
				t.Fatalf("configuration error = %v, want an error: %v", err, tc.WantError)
			}
			e := New(cfg, projects...)
			for _, c := range tc.Checks {
				if got := e.Allowed(tc.Subject, c.Resource, c.Action, c.Object); got != c.Want {
					t.Errorf("Allowed(%+v, %s, %s, %s) = %v, want %v", tc.Subject, c.Resource, c.Action, c.Object, got, c.Want)
				}
			}
		})
	}
}

func TestBuiltinPolicyParses(t *testing.T) {
	p, err := Parse(builtinPolicy)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rules) < 20 || len(p.Groupings) != 2 {
		t.Errorf("built-in policy has %d rules and %d groupings", len(p.Rules), len(p.Groupings))
	}
}

func TestParse(t *testing.T) {
	tests := map[string]struct {
		csv     string
		want    Policy
		wantErr string
	}{
		"p and g lines, spaces and comments": {
			csv: "# comment\n\n  p ,alice, applications ,get, default/*, deny\ng, alice, role:x\n",
			want: Policy{
				Rules:     []Rule{{Subject: "alice", Resource: "applications", Action: "get", Object: "default/*", Effect: Deny}},
				Groupings: []Grouping{{Member: "alice", Role: "role:x"}},
			},
		},
		"quoted field keeps its comma": {
			csv:  `p, "a,b", applications, get, */*, allow`,
			want: Policy{Rules: []Rule{{Subject: "a,b", Resource: "applications", Action: "get", Object: "*/*", Effect: Allow}}},
		},
		"effect defaults to allow": {
			csv:  "p, alice, applications, get, */*",
			want: Policy{Rules: []Rule{{Subject: "alice", Resource: "applications", Action: "get", Object: "*/*", Effect: Allow}}},
		},
		"bad effect":     {csv: "p, a, applications, get, */*, maybe", wantErr: `line 1: "p, a, applications, get, */*, maybe": effect "maybe" is not allow or deny`},
		"short p line":   {csv: "\np, a, applications", wantErr: `line 2: "p, a, applications": a p line has 6 fields: p, subject, resource, action, object, effect`},
		"short g line":   {csv: "g, a", wantErr: `line 1: "g, a": a g line has 3 fields: g, subject, role`},
		"unknown type":   {csv: "q, a, b", wantErr: `line 1: "q, a, b": a line starts with p or g`},
		"empty field":    {csv: "p, a, , get, */*, allow", wantErr: `line 1: "p, a, , get, */*, allow": empty field`},
		"empty is empty": {csv: "", want: Policy{}},
		"only a comment": {csv: "# nothing", want: Policy{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(tc.csv)
			if fmt.Sprint(err) != tc.wantErr && !(err == nil && tc.wantErr == "") {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			if tc.wantErr != "" {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("policy mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
