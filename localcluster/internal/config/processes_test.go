package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadProcesses(t *testing.T) {
	c, err := Load(filepath.Join("testdata", "valid-processes.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Process{
		"whoami": {
			Command: []string{filepath.Join(dir, "bin/whoami"), "--verbose"}, Args: []string{"--listen=127.0.0.1:$(PORT)"},
			Env: map[string]string{"LOG_LEVEL": "debug"}, FreePorts: []string{"PORT"},
		},
		"shell":     {Command: []string{"sh", "-c", "exit 0"}},
		"karpenter": {Env: map[string]string{"FEATURE_GATES": "NodeRepair=true"}},
	}
	if diff := cmp.Diff(want, c.Processes); diff != "" {
		t.Fatalf("processes (-want +got):\n%s", diff)
	}
}

func TestLoadRejectsInvalidProcesses(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "bad-processes.yaml"))
	if err == nil {
		t.Fatal("Load succeeded, want errors")
	}
	for _, want := range []string{
		"processes.no-command.command: required",
		`processes.Bad_Name: name "Bad_Name" is not a DNS label`,
		`processes.bad-env.env: "1X"`,
		`processes.bad-env.freePorts[1]: "not valid"`,
		"processes.both.command[0]: empty executable",
		"processes.both.freePorts[0]: PORT is also set in env",
		`processes.bad-supports.supports: ">= one" is not a version constraint`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestMergeProcesses(t *testing.T) {
	builtins := BuiltinProcesses(func(binary string) string { return "/opt/bin/" + binary })
	tests := map[string]struct {
		file, flags map[string]Process
		want        Process // of the name in wantName
		wantName    string
	}{
		"built-in karpenter binds free ports and elects its leader in its namespace": {
			wantName: KarpenterProcess,
			want: Process{Command: []string{"/opt/bin/karpenter-kwok"}, Env: map[string]string{"LEADER_ELECTION_NAMESPACE": "$(POD_NAMESPACE)"},
				FreePorts: []string{"METRICS_PORT", "HEALTH_PROBE_PORT"}, Supports: ">= 1.0.0-0", Unsupported: karpenterUnsupported, Grants: karpenterGrants},
		},
		"built-in tigera-operator runs without leader election": {
			wantName: TigeraOperatorProcess,
			want:     Process{Command: []string{"/opt/bin/tigera-operator"}, Args: []string{"-enable-leader-election=false"}},
		},
		"built-in wavecd listens on a free loopback port": {
			wantName: WavecdProcess,
			want: Process{Command: []string{"/opt/bin/wavecd"}, Args: []string{"--listen=127.0.0.1:$(WAVECD_LISTEN_PORT)"},
				FreePorts: []string{"WAVECD_LISTEN_PORT"}},
		},
		"file adds env to a built-in, the flag replaces its command": {
			file:     map[string]Process{KarpenterProcess: {Env: map[string]string{"LOG_LEVEL": "debug"}, FreePorts: []string{"METRICS_PORT", "X"}}},
			flags:    map[string]Process{KarpenterProcess: {Command: []string{"/src/karpenter-kwok"}}},
			wantName: KarpenterProcess,
			want: Process{Command: []string{"/src/karpenter-kwok"}, Env: map[string]string{"LEADER_ELECTION_NAMESPACE": "$(POD_NAMESPACE)", "LOG_LEVEL": "debug"},
				FreePorts: []string{"METRICS_PORT", "HEALTH_PROBE_PORT", "X"}, Supports: ">= 1.0.0-0", Unsupported: karpenterUnsupported, Grants: karpenterGrants},
		},
		"file args replace a built-in's": {
			file:     map[string]Process{WavecdProcess: {Args: []string{"--listen=127.0.0.1:0"}}},
			wantName: WavecdProcess,
			want: Process{Command: []string{"/opt/bin/wavecd"}, Args: []string{"--listen=127.0.0.1:0"},
				FreePorts: []string{"WAVECD_LISTEN_PORT"}},
		},
		"a flag alone defines a new process": {
			flags:    map[string]Process{"tool": {Command: []string{"/bin/tool"}}},
			wantName: "tool",
			want:     Process{Command: []string{"/bin/tool"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := MergeProcesses(builtins, tc.file, tc.flags)
			if diff := cmp.Diff(tc.want, got[tc.wantName]); diff != "" {
				t.Fatalf("%s (-want +got):\n%s", tc.wantName, diff)
			}
			if err := (Config{Processes: got}).Validate(); err != nil {
				t.Fatalf("merged definitions invalid: %v", err)
			}
		})
	}
}

func TestParseProcessFlag(t *testing.T) {
	wd, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		value, wantName, wantCommand, wantErr string
	}{
		"absolute path":            {value: "karpenter=/bin/karpenter-kwok", wantName: "karpenter", wantCommand: "/bin/karpenter-kwok"},
		"relative path made abs":   {value: "wavecd=bin/wavecd", wantName: "wavecd", wantCommand: filepath.Join(wd, "bin/wavecd")},
		"bare name kept for PATH":  {value: "tool=mytool", wantName: "tool", wantCommand: "mytool"},
		"no command":               {value: "karpenter=", wantErr: "want NAME=COMMAND"},
		"no equals sign":           {value: "karpenter", wantErr: "want NAME=COMMAND"},
		"name is not a DNS label":  {value: "My_Tool=/bin/x", wantErr: `name "My_Tool" is not a DNS label`},
		"path with an equals sign": {value: "x=/a=b", wantName: "x", wantCommand: "/a=b"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			gotName, p, err := ParseProcessFlag(tc.value)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tc.wantName, tc.wantCommand}, append([]string{gotName}, p.Command...)); diff != "" {
				t.Fatalf("name and command (-want +got):\n%s", diff)
			}
		})
	}
}

// TestImageVersionAndAccepts: a definition that supports some versions
// stands for a pod whose image tag is one of them, or is no version.
func TestImageVersionAndAccepts(t *testing.T) {
	karpenter := BuiltinProcesses(func(b string) string { return b })[KarpenterProcess]
	for image, tc := range map[string]struct {
		version string
		accept  bool
	}{
		"public.ecr.aws/karpenter/controller:1.15.0":                 {version: "1.15.0", accept: true},
		"public.ecr.aws/karpenter/controller:1.15.0@sha256:0123abcd": {version: "1.15.0", accept: true},
		"public.ecr.aws/karpenter/controller:v0.22.1":                {version: "v0.22.1"},
		"public.ecr.aws/karpenter/controller:v1.0.0-rc.1":            {version: "v1.0.0-rc.1", accept: true},
		"public.ecr.aws/karpenter/controller":                        {accept: true},
		"public.ecr.aws/karpenter/controller:latest":                 {accept: true},
		"localhost:5000/karpenter":                                   {accept: true},
	} {
		t.Run(image, func(t *testing.T) {
			if got := ImageVersion(image); got != tc.version {
				t.Errorf("ImageVersion = %q, want %q", got, tc.version)
			}
			if err := karpenter.Accepts(image); (err == nil) != tc.accept {
				t.Errorf("Accepts = %v, want accepted %v", err, tc.accept)
			}
		})
	}
}
