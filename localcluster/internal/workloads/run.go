package workloads

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/wavecd/wavecd/localcluster/internal/config"
)

// Options configure the workloads controller.
type Options struct {
	// CNIAgentSelector, when not empty, turns on CNI mode: the label
	// selector of the CNI agent pods.
	CNIAgentSelector string
	// Processes configure process-backed pods; without a Dir they are off.
	Processes ProcessOptions
	// Log receives what the controller does.
	Log *slog.Logger
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
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet"})

	requires, err := newRequiresController(client, factory, recorder, log)
	if err != nil {
		return err
	}
	var cni *cniController
	if opts.CNIAgentSelector != "" {
		if cni, err = newCNIController(client, factory, opts.CNIAgentSelector, log); err != nil {
			return err
		}
	}
	var procs *processController
	if opts.Processes.Dir != "" {
		if procs, err = newProcessController(client, factory, recorder, log.With("controller", "process"), opts.Processes); err != nil {
			return err
		}
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer cache of %v did not sync", typ)
		}
	}
	log.Info("workloads controller running", "cniAgentSelector", opts.CNIAgentSelector, "processes", procs != nil)
	if cni != nil {
		go runWorkers(ctx, cni.queue, 1, log.With("controller", "cni"), cni.sync)
	}
	if procs != nil {
		go runWorkers(ctx, procs.queue, 2, log.With("controller", "process"), procs.sync)
		defer procs.stopAll(cmp.Or(opts.Processes.StopGrace, 5*time.Second))
	}
	runWorkers(ctx, requires.queue, 2, log.With("controller", "requires"), requires.sync)
	return nil
}
