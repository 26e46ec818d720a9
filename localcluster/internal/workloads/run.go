package workloads

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/wavecd/wavecd/localcluster/internal/config"
	"github.com/wavecd/wavecd/localcluster/internal/network"
)

// Options configure the workloads controller.
type Options struct {
	// CNIAgentSelector, when not empty, turns on CNI mode: the label
	// selector of the CNI agent pods.
	CNIAgentSelector string
	// Processes configure process-backed pods; without a Dir they are off.
	Processes ProcessOptions
	// Simulation is how pods behave beyond their specs.
	Simulation config.Simulation
	// Egress, when its Listen is set, serves the API server's egress
	// proxy (package network).
	Egress EgressOptions
	// Log receives what the controller does.
	Log *slog.Logger
}

// EgressOptions configure the API server's egress proxy.
type EgressOptions struct {
	// Listen is the proxy's 127.0.0.1 address; empty turns it off.
	Listen string
	// CA signs serving certificates for Service names.
	CA *network.CA
}

// ProcessOptions configure process-backed pods.
type ProcessOptions struct {
	// Definitions by name, the value of the process annotation.
	Definitions map[string]config.Process
	// Dir holds one directory per pod (kubeconfig, token, CA), the
	// working directory of its process.
	Dir string
	// LogDir receives the processes' output, one file per pod.
	LogDir string
	// Server and CAData locate the API server in the processes' kubeconfigs.
	Server string
	CAData []byte
	// StopGrace is how long processes get between SIGTERM and SIGKILL when
	// the controller stops.
	StopGrace time.Duration
}

// Run runs the controllers until ctx ends.
func Run(ctx context.Context, client kubernetes.Interface, opts Options) error {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := recorders{
		kubelet: broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet"}),
		notes:   broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: NotesComponent}),
	}

	c, err := newControllers(client, factory, recorder, log, opts)
	if err != nil {
		return err
	}
	pods, cni, ingress, procs := c.pods, c.cni, c.ingress, c.procs
	expected := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ExpectedServicesNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", ExpectedServicesConfigMap).String()
		}))
	if err := pods.watchExpected(expected.Core().V1().ConfigMaps().Informer()); err != nil {
		return err
	}
	for _, f := range []informers.SharedInformerFactory{factory, expected} {
		f.Start(ctx.Done())
		defer f.Shutdown()
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return fmt.Errorf("informer cache of %v did not sync", typ)
			}
		}
	}
	go func() {
		if err := c.serveEgress(ctx); err != nil {
			log.Error("egress proxy stopped", "err", err)
		}
	}()
	log.Info("workloads controller running", "cniAgentSelector", opts.CNIAgentSelector, "processes", procs != nil)
	if cni != nil {
		go runWorkers(ctx, cni.queue, 1, log.With("controller", "cni"), cni.sync)
	}
	if ingress != nil {
		go runWorkers(ctx, ingress.queue, 1, log.With("controller", "ingress"), ingress.sync)
	}
	if procs != nil {
		go runWorkers(ctx, procs.queue, 2, log.With("controller", "process"), procs.sync)
		defer procs.stopAll(cmp.Or(opts.Processes.StopGrace, 5*time.Second))
	}
	runWorkers(ctx, pods.queue, 4, log.With("controller", "pods"), pods.sync)
	return nil
}

// egress prepares the egress proxy (its listener is open when it returns,
// so the API server can dial it) and returns the function that serves it.
func egress(client kubernetes.Interface, f informers.SharedInformerFactory, opts EgressOptions, log *slog.Logger) (func(context.Context) error, error) {
	if opts.Listen == "" {
		return func(context.Context) error { return nil }, nil
	}
	pods := f.Core().V1().Pods().Informer()
	if err := pods.AddIndexers(cache.Indexers{network.PodIPIndex: network.IndexPodIP}); err != nil {
		return nil, fmt.Errorf("index pods by IP: %w", err)
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	backends := network.PodBackends{Pods: pods.GetIndexer(), Secret: func(ctx context.Context, ns, name string) (map[string][]byte, error) {
		s, err := client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return s.Data, nil
	}}
	p := &network.Proxy{Backends: backends, CA: opts.CA, Log: log}
	return func(ctx context.Context) error { return p.Serve(ctx, ln) }, nil
}

// controllers are the parts Run starts; nil when their option is off.
type controllers struct {
	pods        *podController
	cni         *cniController
	ingress     *ingressController
	procs       *processController
	serveEgress func(context.Context) error
}

// newControllers builds the controllers opts asks for on factory.
func newControllers(client kubernetes.Interface, factory informers.SharedInformerFactory, recorder recorders, log *slog.Logger, opts Options) (*controllers, error) {
	c := &controllers{}
	var err error
	if c.pods, err = newPodController(client, factory, recorder, log.With("controller", "pods"), opts.Simulation, opts.Processes.Definitions); err != nil {
		return nil, err
	}
	if opts.CNIAgentSelector != "" {
		if c.cni, err = newCNIController(client, factory, opts.CNIAgentSelector, log); err != nil {
			return nil, err
		}
	}
	if c.serveEgress, err = egress(client, factory, opts.Egress, log.With("controller", "egress")); err != nil {
		return nil, err
	}
	if ic := opts.Simulation.IngressController; ic != nil {
		if c.ingress, err = newIngressController(client, factory, *ic, opts.Simulation.TimeScale, log.With("controller", "ingress")); err != nil {
			return nil, err
		}
	}
	if opts.Processes.Dir != "" {
		if c.procs, err = newProcessController(client, factory, recorder, log.With("controller", "process"), opts.Processes); err != nil {
			return nil, err
		}
	}
	return c, nil
}
