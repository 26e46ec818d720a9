package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/client-go/kubernetes"

	"github.com/wavecd/wavecd/localcluster/internal/config"
	"github.com/wavecd/wavecd/localcluster/internal/forkthread"
	"github.com/wavecd/wavecd/localcluster/internal/stages"
)

// Options configure a cluster start.
type Options struct {
	Dir string
	// Config holds the node groups and the CNI mode; it must be valid.
	Config config.Config
	// Progress receives one line per start step; nil discards them.
	Progress io.Writer
}

// supervisor runs the control plane in the foreground.
type supervisor struct {
	opts     Options
	layout   Layout
	pki      PKI
	state    State
	starter  *forkthread.Starter
	etcd     *embed.Etcd
	children []*child
	exited   chan *child
	start    time.Time
}

// Run starts the cluster and blocks until ctx ends or a component dies,
// then stops everything it started.
//
// SIGUSR1 stops kube-apiserver and SIGUSR2 starts it again on the same
// port (etcd and the other components keep running), so tests can show
// what clients do through an API server outage or restart.
func Run(ctx context.Context, opts Options) (err error) {
	s, err := newSupervisor(opts)
	if err != nil {
		return err
	}
	defer s.shutdown()
	outage := make(chan os.Signal, 4)
	signal.Notify(outage, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(outage)
	if err := s.boot(ctx); err != nil {
		s.state.Error = err.Error()
		_ = writeState(s.layout, s.state)
		return err
	}
	for {
		select {
		case <-ctx.Done():
			s.logf("stopping")
			return nil
		case c := <-s.exited:
			if c.stopped {
				continue
			}
			return fmt.Errorf("%s exited (%w); see %s", c.name, c.err, s.layout.Log(c.name))
		case sig := <-outage:
			if err := s.apiServerOutage(sig == syscall.SIGUSR1); err != nil {
				s.logf("%v", err)
			}
		}
	}
}

// apiServerOutage stops kube-apiserver (stop) or starts it again.
func (s *supervisor) apiServerOutage(stop bool) error {
	const name = "kube-apiserver"
	for i, c := range s.children {
		if c.name != name {
			continue
		}
		if !stop {
			return nil // running already
		}
		c.stopped = true
		c.stop(15 * time.Second)
		s.children = append(s.children[:i], s.children[i+1:]...)
		delete(s.state.Children, name)
		s.logf("%s stopped (SIGUSR1)", name)
		return writeState(s.layout, s.state)
	}
	if stop {
		return nil // stopped already
	}
	s.logf("%s starting again (SIGUSR2)", name)
	return s.spawn(name, apiServerArgs(s.layout, s.state.Ports))
}

func newSupervisor(opts Options) (*supervisor, error) {
	if err := opts.Config.Validate(); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("resolve --dir: %w", err)
	}
	opts.Dir = dir
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	l := Layout{Dir: dir}
	if err := os.MkdirAll(filepath.Dir(l.Log("x")), 0o700); err != nil {
		return nil, fmt.Errorf("create cluster directory: %w", err)
	}
	prev, err := ReadState(l)
	if err != nil {
		return nil, err
	}
	if processAlive(prev.SupervisorPID, dir) {
		return nil, fmt.Errorf("a cluster is already running in %s (pid %d)", dir, prev.SupervisorPID)
	}
	ports, err := pickPorts(prev.Ports)
	if err != nil {
		return nil, err
	}
	return &supervisor{
		opts: opts, layout: l, starter: forkthread.New(), exited: make(chan *child, 8), start: time.Now(),
		state: State{SupervisorPID: os.Getpid(), Ports: ports, Children: map[string]int{}, StartedAt: time.Now()},
	}, nil
}

func (s *supervisor) logf(format string, args ...any) {
	fmt.Fprintf(s.opts.Progress, "[%5.1fs] %s\n", time.Since(s.start).Seconds(), fmt.Sprintf(format, args...))
}

func (s *supervisor) boot(ctx context.Context) error {
	if err := writeState(s.layout, s.state); err != nil {
		return err
	}
	if err := s.prepareFiles(); err != nil {
		return err
	}
	var err error
	if s.etcd, err = startEtcd(ctx, s.layout, s.state.Ports); err != nil {
		return err
	}
	s.logf("etcd ready on 127.0.0.1:%d", s.state.Ports.EtcdClient)
	if err := s.spawn("kube-apiserver", apiServerArgs(s.layout, s.state.Ports), apiServerEnv(s.layout)...); err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(restConfig(s.pki, s.state.Ports.APIServer))
	if err != nil {
		return fmt.Errorf("build client: %w", err)
	}
	if err := s.waitFor(ctx, "kube-apiserver ready", 90*time.Second, apiServerReady(client)); err != nil {
		return err
	}
	if err := releaseNodeLeases(ctx, client); err != nil {
		return err
	}
	if err := ensureFargatePolicy(ctx, client, s.opts.Config.FargateSelectors()); err != nil {
		return err
	}
	selector := s.opts.Config.AgentSelector()
	for name, args := range map[string][]string{
		"kube-controller-manager": controllerManagerArgs(s.layout),
		"kube-scheduler":          schedulerArgs(s.layout),
		"kwok":                    kwokArgs(s.layout),
		"workloads":               workloadsArgs(s.layout, s.state.Ports, selector),
	} {
		if err := s.spawn(name, args); err != nil {
			return err
		}
	}
	if err := ensureNodes(ctx, client, s.opts.Config.NodeGroups); err != nil {
		return err
	}
	if err := s.waitNodes(ctx, client); err != nil {
		return err
	}
	if err := s.waitFor(ctx, "controllers running", 60*time.Second, defaultServiceAccount(client)); err != nil {
		return err
	}
	// The API server loads the Fargate policy in the background: a pod
	// created before would never be placed.
	if len(s.opts.Config.FargateSelectors()) > 0 {
		if err := s.waitFor(ctx, "fargate profiles applied", 60*time.Second, fargatePolicyActive(client)); err != nil {
			return err
		}
	}
	s.state.Ready = true
	s.state.ReadyAfter = time.Since(s.start).Round(10 * time.Millisecond).String()
	s.logf("cluster ready; kubeconfig: %s", s.layout.Kubeconfig())
	return writeState(s.layout, s.state)
}

// waitNodes waits until the nodes are Ready, or in CNI mode until they
// report their (NotReady) status.
func (s *supervisor) waitNodes(ctx context.Context, client kubernetes.Interface) error {
	n := s.opts.Config.NodeCount()
	if s.opts.Config.AgentSelector() != "" {
		return s.waitFor(ctx, fmt.Sprintf("%d nodes registered (CNI mode: Ready once a CNI agent runs)", n), 90*time.Second,
			nodesReporting(client, n))
	}
	return s.waitFor(ctx, fmt.Sprintf("%d nodes Ready", n), 90*time.Second, nodesReady(client, n))
}

func (s *supervisor) prepareFiles() error {
	pki, err := ensurePKI(s.layout)
	if err != nil {
		return err
	}
	s.pki = pki
	cfg, err := stages.Config(stages.Options{CNI: s.opts.Config.AgentSelector() != "",
		NodeStartup: s.opts.Config.Scale(config.Duration(s.opts.Config.NodeStartup, 0))})
	if err != nil {
		return err
	}
	if err := os.WriteFile(s.layout.KWOKConfig(), []byte(cfg), 0o600); err != nil {
		return fmt.Errorf("write kwok config: %w", err)
	}
	if err := writeSchedulerConfig(s.layout, s.opts.Config); err != nil {
		return err
	}
	defs, err := json.MarshalIndent(s.opts.Config.Processes, "", "  ")
	if err != nil {
		return fmt.Errorf("encode process definitions: %w", err)
	}
	if err := os.WriteFile(s.layout.ProcessDefinitions(), defs, 0o600); err != nil {
		return fmt.Errorf("write process definitions: %w", err)
	}
	sim, err := json.MarshalIndent(s.opts.Config.Simulation(), "", "  ")
	if err != nil {
		return fmt.Errorf("encode simulation settings: %w", err)
	}
	if err := os.WriteFile(s.layout.Simulation(), sim, 0o600); err != nil {
		return fmt.Errorf("write simulation settings: %w", err)
	}
	if err := os.WriteFile(s.layout.EgressConfig(), []byte(egressConfig(s.layout, s.state.Ports)), 0o600); err != nil {
		return fmt.Errorf("write egress configuration: %w", err)
	}
	return writeKubeconfig(s.layout, s.pki, s.state.Ports.APIServer)
}

func (s *supervisor) spawn(name string, args []string, env ...string) error {
	c, err := startChild(s.starter, name, s.layout.Log(name), args, env)
	if err != nil {
		return err
	}
	s.children = append(s.children, c)
	s.state.Children[name] = c.cmd.Process.Pid
	go func() {
		<-c.done
		s.exited <- c
	}()
	s.logf("%s started (pid %d)", name, c.cmd.Process.Pid)
	return writeState(s.layout, s.state)
}

// waitFor polls cond until it holds, a component dies, or the timeout passes.
func (s *supervisor) waitFor(ctx context.Context, what string, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		ok, err := cond(ctx)
		if ok {
			s.logf("%s", what)
			return nil
		}
		lastErr = err
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s (last error: %w)", timeout, what, lastErr)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case c := <-s.exited:
			return fmt.Errorf("%s exited while waiting for %s (%w); see %s", c.name, what, c.err, s.layout.Log(c.name))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// shutdown stops the components in reverse dependency order, then etcd,
// and records that the cluster is down (keeping its ports for next time).
func (s *supervisor) shutdown() {
	var wg sync.WaitGroup
	var apiserver *child
	for _, c := range s.children {
		if c.name == "kube-apiserver" {
			apiserver = c
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); c.stop(10 * time.Second) }()
	}
	wg.Wait()
	if apiserver != nil {
		apiserver.stop(15 * time.Second)
	}
	if s.etcd != nil {
		s.etcd.Close()
	}
	down := State{Ports: s.state.Ports, Error: s.state.Error}
	if err := writeState(s.layout, down); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.logf("record stop: %v", err)
	}
}
