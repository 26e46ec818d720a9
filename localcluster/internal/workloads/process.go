package workloads

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/wavecd/wavecd/localcluster/internal/config"
	"github.com/wavecd/wavecd/localcluster/internal/forkthread"
	"github.com/wavecd/wavecd/localcluster/internal/kubelet"
	"github.com/wavecd/wavecd/localcluster/internal/stages"
)

const (
	// configErrorRetry is how soon a pod whose container cannot be created
	// is looked at again.
	configErrorRetry = 10 * time.Second
	// vanishedGrace is the stop grace of a process whose pod is gone.
	vanishedGrace = 2 * time.Second
)

// processController runs the host processes of pods annotated
// stages.ProcessAnnotation (or running a definition's image) and mirrors
// them into the pods' status.
type processController struct {
	client   kubernetes.Interface
	pods     corelisters.PodLister
	nodes    corelisters.NodeLister
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder
	notes    record.EventRecorder
	log      *slog.Logger
	opts     ProcessOptions
	creds    credentials
	starter  *forkthread.Starter
	now      func() time.Time

	mu sync.Mutex
	// records hold, per pod key, the pod's current or last process.
	records map[string]*podRecord
	// live holds every process not yet ended, also of replaced records.
	live map[*hostProcess]bool
}

// podRecord is a pod's process as the controller knows it.
type podRecord struct {
	uid  types.UID
	proc *hostProcess
	// exitShown: the pod's status shows the end of proc.
	exitShown bool
	// renewAt is when the process's token is due for renewal.
	renewAt time.Time
}

func (r *podRecord) view() procView {
	if r.proc == nil {
		return procView{}
	}
	if !r.proc.exited() {
		return procView{running: true, started: r.proc.started, containerID: r.proc.containerID()}
	}
	v := procView{finished: r.proc.finished}
	if !r.exitShown {
		v.exit = &r.proc.exit
	}
	return v
}

func newProcessController(client kubernetes.Interface, f informers.SharedInformerFactory, rec recorders,
	log *slog.Logger, opts ProcessOptions) (*processController, error) {
	c := &processController{
		client: client, recorder: rec.kubelet, notes: rec.notes, log: log, opts: opts, now: time.Now,
		pods:    f.Core().V1().Pods().Lister(),
		nodes:   f.Core().V1().Nodes().Lister(),
		queue:   newQueue("process"),
		creds:   credentials{client: client, server: opts.Server, caData: opts.CAData},
		starter: forkthread.New(),
		records: map[string]*podRecord{},
		live:    map[*hostProcess]bool{},
	}
	onPod := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if p, ok := obj.(*corev1.Pod); ok && isProcessPod(p, opts.Definitions) {
			c.queue.Add(cache.MetaObjectToName(p).String())
		}
	}
	if _, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onPod, UpdateFunc: func(_, obj any) { onPod(obj) }, DeleteFunc: onPod,
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	if _, err := f.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.onNode(nil, obj) }, UpdateFunc: c.onNode,
	}); err != nil {
		return nil, fmt.Errorf("watch nodes: %w", err)
	}
	return c, nil
}

// processName names the process behind pod p: its process annotation, or
// the definition whose images include its first container's.
func processName(p *corev1.Pod, defs map[string]config.Process) (string, bool) {
	if name, ok := p.Annotations[stages.ProcessAnnotation]; ok {
		return name, true
	}
	if len(p.Spec.Containers) == 0 || len(defs) == 0 {
		return "", false
	}
	image := p.Spec.Containers[0].Image
	name, ok := config.ProcessForImage(defs, image)
	if !ok || defs[name].Accepts(image) != nil {
		return "", false // a version the process does not stand for: simulated (see noteUnsupported)
	}
	return name, true
}

func isProcessPod(p *corev1.Pod, defs map[string]config.Process) bool {
	_, ok := processName(p, defs)
	return ok
}

// onNode brings back the pods of a node that runs more than it did: the
// host-network ones once only its network is not ready (a CNI plugin not
// initialised yet), all of them once Ready. Updates that change nothing
// of that (heartbeats, annotations) do not list the pods.
func (c *processController) onNode(oldObj, obj any) {
	n, ok := obj.(*corev1.Node)
	if !ok || runsOn(n) == runsNone {
		return
	}
	if old, ok := oldObj.(*corev1.Node); ok && runsOn(old) >= runsOn(n) {
		return
	}
	pods, err := c.pods.List(labels.Everything())
	if err != nil {
		return
	}
	for _, p := range pods {
		if p.Spec.NodeName == n.Name && isProcessPod(p, c.opts.Definitions) {
			c.queue.Add(cache.MetaObjectToName(p).String())
		}
	}
}

// runs reports whether p's node runs it now.
func (c *processController) runs(p *corev1.Pod) bool {
	n, err := c.nodes.Get(p.Spec.NodeName)
	return err == nil && runsOn(n).allows(p)
}

// sync takes one pod one step further and tells when to look again.
func (c *processController) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil //nolint:nilerr // a key that names no pod: nothing to do, nothing to retry
	}
	p, err := c.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.vanished(key)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	rec := c.record(key, p.UID)
	b, err := kubelet.ParseBackoff(p.Annotations[kubelet.BackoffAnnotation])
	if err != nil {
		b = kubelet.KubeletBackoff
	}
	st := planProcess(p, rec.view(), c.runs(p), b, c.now())
	switch st.action {
	case actStop:
		c.stop(p, rec)
		return 0, nil
	case actRemove:
		return 0, c.remove(ctx, p)
	case actStart:
		return c.start(ctx, p, rec, st.restart)
	case actStatus:
		if err := c.updateStatus(ctx, p, st.status); err != nil {
			return 0, err
		}
		rec.exitShown = rec.proc != nil && rec.proc.exited()
		for _, e := range st.events {
			recordEvent(c.recorder, p, e)
		}
	default: // actWait: below
	}
	return c.renewToken(ctx, p, rec, st.after)
}

// record returns the pod's record, replacing (and stopping the process of)
// a record of an earlier pod of the same name.
func (c *processController) record(key string, uid types.UID) *podRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.records[key]
	if rec != nil && rec.uid != uid {
		if rec.proc != nil {
			rec.proc.stop(vanishedGrace)
		}
		rec = nil
	}
	if rec == nil {
		rec = &podRecord{uid: uid}
		c.records[key] = rec
	}
	return rec
}

// vanished handles a pod that is gone: its process stops; once it has,
// the record and the pod's directory go too.
func (c *processController) vanished(key string) {
	c.mu.Lock()
	rec := c.records[key]
	c.mu.Unlock()
	if rec == nil {
		return
	}
	if rec.proc != nil && !rec.proc.exited() {
		if rec.proc.stop(vanishedGrace) {
			c.log.Info("pod gone; stopping its process", "pod", key, "pid", rec.proc.pid)
		}
		return // its exit brings the key back
	}
	c.mu.Lock()
	delete(c.records, key)
	c.mu.Unlock()
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	_ = os.RemoveAll(c.podDir(ns, name))
}

func (c *processController) stop(p *corev1.Pod, rec *podRecord) {
	grace := 30 * time.Second
	if s := p.DeletionGracePeriodSeconds; s != nil {
		grace = time.Duration(*s) * time.Second
	} else if s := p.Spec.TerminationGracePeriodSeconds; s != nil {
		grace = time.Duration(*s) * time.Second
	}
	if !rec.proc.stop(grace) {
		return
	}
	c.log.Info("stopping process", "pod", p.Namespace+"/"+p.Name, "pid", rec.proc.pid, "grace", grace)
	for _, ct := range p.Spec.Containers {
		recordEvent(c.recorder, p, kubelet.Event{Container: ct.Name, Reason: "Killing", Message: "Stopping container " + ct.Name})
	}
}

// remove deletes a terminating pod whose process has stopped, as the
// kubelet does once the containers are gone.
func (c *processController) remove(ctx context.Context, p *corev1.Pod) error {
	err := c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: metav1.NewUIDPreconditions(string(p.UID)),
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("remove pod: %w", err)
	}
	return nil
}

func (c *processController) updateStatus(ctx context.Context, p *corev1.Pod, st *corev1.PodStatus) error {
	updated := p.DeepCopy()
	updated.Status = *st
	if _, err := c.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	return nil
}

// renewToken renews a running process's token when due and returns the
// sooner of after and the next renewal.
func (c *processController) renewToken(ctx context.Context, p *corev1.Pod, rec *podRecord, after time.Duration) (time.Duration, error) {
	if rec.proc == nil || rec.proc.exited() || rec.renewAt.IsZero() {
		return after, nil
	}
	if !c.now().Before(rec.renewAt) {
		renewAt, err := c.creds.renew(ctx, p, c.podDir(p.Namespace, p.Name))
		if err != nil {
			return 0, err
		}
		rec.renewAt = renewAt
	}
	next := rec.renewAt.Sub(c.now())
	if after == 0 || next < after {
		return next, nil
	}
	return after, nil
}

// start starts the pod's process and shows it running; a process that
// cannot start counts as one that exited at once.
func (c *processController) start(ctx context.Context, p *corev1.Pod, rec *podRecord, restart bool) (time.Duration, error) {
	key := cache.MetaObjectToName(p).String()
	name, _ := processName(p, c.opts.Definitions)
	def, ok := c.opts.Definitions[name]
	if !ok {
		known := strings.Join(slices.Sorted(maps.Keys(c.opts.Definitions)), ", ")
		return c.cannotCreate(ctx, p, fmt.Sprintf("no process definition named %q (known: %s)", name, known))
	}
	if err := c.grant(ctx, p, name, def.Grants); err != nil {
		return 0, err
	}
	dir := c.podDir(p.Namespace, p.Name)
	renewAt, err := c.creds.write(ctx, p, dir)
	if err != nil {
		return 0, err
	}
	in, err := c.launchInput(p, def, dir)
	if err != nil {
		return 0, err
	}
	l, err := buildLaunch(ctx, p, in)
	if err != nil {
		return c.cannotCreate(ctx, p, err.Error())
	}
	hp, err := startHost(c.starter, l, dir, c.logPath(p.Namespace, p.Name), func() { c.exited(key) })
	if err != nil {
		rec.proc = startFailure(name, err)
		rec.exitShown = false
		c.log.Warn("process could not start", "pod", key, "process", name, "err", err)
		return time.Millisecond, nil // the next look shows the failure
	}
	c.mu.Lock()
	c.live[hp] = true
	c.mu.Unlock()
	rec.proc, rec.exitShown, rec.renewAt = hp, false, renewAt
	c.log.Info("process started", "pod", key, "process", name, "pid", hp.pid, "argv", l.argv)
	if err := c.updateStatus(ctx, p, processRunningStatus(p, hp.started, hp.containerID(), restart)); err != nil {
		return 0, err
	}
	for _, ct := range p.Spec.Containers {
		recordEvent(c.recorder, p, kubelet.Event{Container: ct.Name, Reason: "Started", Message: "Started container " + ct.Name})
	}
	c.noteStarted(p, name, l.argv, restart)
	return c.renewToken(ctx, p, rec, 0)
}

// exited is called when a process ends.
func (c *processController) exited(key string) {
	c.mu.Lock()
	for hp := range c.live {
		if hp.exited() {
			delete(c.live, hp)
		}
	}
	c.mu.Unlock()
	c.queue.Add(key)
}

// startFailure is a process that could not start, as a kubelet shows a
// container whose command does not run.
func startFailure(name string, err error) *hostProcess {
	hp := &hostProcess{started: time.Now(), finished: time.Now(), done: make(chan struct{})}
	hp.exit = kubelet.Exit{Code: 128, Reason: kubelet.ReasonStartError, Message: fmt.Sprintf("process %s: %v (set its command with"+
		" --process %s=PATH or processes.%s.command in the config file)", name, err, name, name)}
	close(hp.done)
	return hp
}

// cannotCreate shows the container waiting with a config error and looks
// again later.
func (c *processController) cannotCreate(ctx context.Context, p *corev1.Pod, msg string) (time.Duration, error) {
	cs := p.Status.ContainerStatuses[0]
	if cs.State.Waiting == nil || cs.State.Waiting.Reason != kubelet.ReasonConfigError || cs.State.Waiting.Message != msg {
		if err := c.updateStatus(ctx, p, kubelet.WaitingStatus(p, kubelet.ReasonConfigError, msg)); err != nil {
			return 0, err
		}
		recordEvent(c.recorder, p, kubelet.Event{Warning: true, Container: cs.Name, Reason: "Failed", Message: "Error: " + msg})
		c.log.Warn("process cannot be created", "pod", p.Namespace+"/"+p.Name, "err", msg)
	}
	return configErrorRetry, nil
}

func (c *processController) launchInput(p *corev1.Pod, def config.Process, dir string) (launchInput, error) {
	in := launchInput{def: def, host: map[string]string{}, values: apiValues{c.client},
		fixed: map[string]string{EnvKubeconfig: filepath.Join(dir, kubeconfigFile)}}
	for _, k := range hostEnv {
		if v, ok := os.LookupEnv(k); ok {
			in.host[k] = v
		}
	}
	for _, name := range def.FreePorts {
		port, err := freeLoopbackPort()
		if err != nil {
			return launchInput{}, err
		}
		in.fixed[name] = strconv.Itoa(port)
	}
	if n, err := c.nodes.Get(p.Spec.NodeName); err == nil {
		in.allocatable = n.Status.Allocatable
	}
	return in, nil
}

func (c *processController) podDir(ns, name string) string {
	return filepath.Join(c.opts.Dir, ns+"_"+name)
}

// logPath is the log file of a pod's processes, appended to at each start.
func (c *processController) logPath(ns, name string) string {
	return filepath.Join(c.opts.LogDir, "process-"+ns+"_"+name+".log")
}

// stopAll stops every process and waits until they have ended or the grace
// period and a second have passed.
func (c *processController) stopAll(grace time.Duration) {
	c.mu.Lock()
	procs := slices.Collect(maps.Keys(c.live))
	c.mu.Unlock()
	for _, hp := range procs {
		hp.stop(grace)
	}
	deadline := time.After(grace + time.Second)
	for _, hp := range procs {
		select {
		case <-hp.done:
		case <-deadline:
			return
		}
	}
}

func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// apiValues reads ConfigMaps and Secrets from the API server.
type apiValues struct{ client kubernetes.Interface }

func (a apiValues) configMap(ctx context.Context, ns, name string) (map[string]string, error) {
	cm, err := a.client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return cm.Data, nil
}

func (a apiValues) secret(ctx context.Context, ns, name string) (map[string]string, error) {
	s, err := a.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(s.Data))
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out, nil
}
