package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Layout names the files of a cluster directory.
type Layout struct{ Dir string }

func (l Layout) path(elem ...string) string {
	return filepath.Join(append([]string{l.Dir}, elem...)...)
}

// Kubeconfig is the admin kubeconfig users and tests read.
func (l Layout) Kubeconfig() string { return l.path("kubeconfig") }

// State is the supervisor's state file.
func (l Layout) State() string { return l.path("state.json") }

// Etcd is etcd's data directory.
func (l Layout) Etcd() string { return l.path("etcd") }

// PKI holds certificates, keys and the token file.
func (l Layout) PKI(name string) string { return l.path("pki", name) }

// Log is a component's log file.
func (l Layout) Log(name string) string { return l.path("logs", name+".log") }

// LogDir holds the components' and the processes' logs.
func (l Layout) LogDir() string { return l.path("logs") }

// ProcessDefinitions are the process definitions handed to the workloads
// controller.
func (l Layout) ProcessDefinitions() string { return l.path("processes.json") }

// Processes holds one working directory per process-backed pod.
func (l Layout) Processes() string { return l.path("processes") }

// Simulation is the profile's simulation settings handed to the workloads
// controller.
func (l Layout) Simulation() string { return l.path("simulation.json") }

// EgressConfig is the API server's egress selector configuration.
func (l Layout) EgressConfig() string { return l.path("egress.yaml") }

// KWOKConfig is the stage configuration handed to KWOK.
func (l Layout) KWOKConfig() string { return l.path("kwok.yaml") }

// SchedulerConfig is the kube-scheduler's configuration file.
func (l Layout) SchedulerConfig() string { return l.path("scheduler.yaml") }

// Ports are the loopback ports a cluster listens on.
type Ports struct {
	EtcdClient int `json:"etcdClient"`
	EtcdPeer   int `json:"etcdPeer"`
	APIServer  int `json:"apiServer"`
	// Egress is the API server's egress proxy to the cluster (webhooks
	// and aggregated APIs), served by the workloads controller.
	Egress int `json:"egress"`
}

// State is what a running supervisor records about itself.
type State struct {
	SupervisorPID int            `json:"supervisorPID"`
	Ports         Ports          `json:"ports"`
	Children      map[string]int `json:"children"`
	StartedAt     time.Time      `json:"startedAt"`
	// Ready is set once the API server answers and the nodes are Ready.
	Ready bool `json:"ready"`
	// ReadyAfter is how long the start took until Ready.
	ReadyAfter string `json:"readyAfter,omitempty"`
	// Error is set when the supervisor gave up starting.
	Error string `json:"error,omitempty"`
}

// ReadState reads the state file; a missing file gives an empty state and
// no error.
func ReadState(l Layout) (State, error) {
	var s State
	b, err := os.ReadFile(l.State())
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("read cluster state: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("parse %s: %w", l.State(), err)
	}
	return s, nil
}

// writeState replaces the state file atomically.
func writeState(l Layout, s State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode cluster state: %w", err)
	}
	tmp := l.State() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write cluster state: %w", err)
	}
	if err := os.Rename(tmp, l.State()); err != nil {
		return fmt.Errorf("write cluster state: %w", err)
	}
	return nil
}
