package rehearsal

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/wavecd/wavecd/internal/appset"
	"github.com/wavecd/wavecd/internal/controller"
	"github.com/wavecd/wavecd/internal/notify"
	"github.com/wavecd/wavecd/internal/rehearsal/manifest"
	"github.com/wavecd/wavecd/internal/rehearsal/timeline"
	"github.com/wavecd/wavecd/internal/server"
	"github.com/wavecd/wavecd/internal/source"
)

// NotSettledError reports a rehearsal that stalled, ran out of time or was
// interrupted before every app settled. The CLI exits with ExitNotSettled.
type NotSettledError struct {
	// Reason says what ended the wait.
	Reason string
	// Waiting lists the apps not settled and why.
	Waiting []string
}

// ExitNotSettled is the exit code of `wavecd up --exit-when-settled` when
// the rehearsal does not settle.
const ExitNotSettled = 3

func (e *NotSettledError) Error() string {
	if len(e.Waiting) == 0 {
		return "not settled: " + e.Reason
	}
	return "not settled: " + e.Reason + "; " + strings.Join(e.Waiting, "; ")
}

// controllerStopTimeout bounds the wait for the controller to stop.
const controllerStopTimeout = 30 * time.Second

// follow runs the controller, applies the root manifest and prints the
// timeline until the apps settle (with ExitWhenSettled) or ctx ends.
func (u *Up) follow(ctx context.Context, p *timeline.Printer, s *session) error {
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	events := make(chan timeline.Observation, 256)
	listed, err := timeline.Watch(watchCtx, s.cfg, Namespace, events)
	if err != nil {
		return err
	}
	fatal := make(chan error, 2)
	stop, err := u.startController(ctx, s, fatal)
	if err != nil {
		return err
	}
	defer stop()
	if u.Listen != "" {
		srv := server.New(server.Options{Addr: u.Listen})
		go func() { fatal <- srv.Start(watchCtx) }()
	}
	if u.UI != "" {
		url, password, err := u.serveUI(watchCtx, s, fatal)
		if err != nil {
			return err
		}
		p.Sayf("web UI %s (user admin, password %s)", url, password)
	}
	names := manifest.Names(s.rootApps())
	t := timeline.NewTracker(p.Start, names)
	catchUp(p, t, events, listed)
	b, err := newBootstrap(s.cfg, Namespace)
	if err != nil {
		return err
	}
	if err := b.applyRoot(ctx, s.repo.Root); err != nil {
		return err
	}
	p.Sayf("root manifest %s applied (%s)", u.Root, describeRoot(s.repo.Root, s.generated))
	return u.loop(ctx, p, t, events, fatal)
}

// catchUp prints what the cluster held when the watch started (apps of an
// earlier run), so the timeline stays in order.
func catchUp(p *timeline.Printer, t *timeline.Tracker, events <-chan timeline.Observation, listed func() bool) {
	show := func(o timeline.Observation) {
		for _, l := range t.Observe(o) {
			p.Print(l)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); !listed() && time.Now().Before(deadline); {
		select {
		case o := <-events:
			show(o)
		case <-time.After(10 * time.Millisecond):
		}
	}
	for {
		select {
		case o := <-events:
			show(o)
		default:
			return
		}
	}
}

// startController runs the controller in process, with the
// ApplicationSet controller beside it, until ctx ends or the returned stop
// is called; stop waits for it. An exit of its own is sent to fatal.
func (u *Up) startController(ctx context.Context, s *session, fatal chan<- error) (stop func(), err error) {
	return runControllers(ctx, s.cfg, controllerSetup{mirrors: s.mirrors, cacheDir: s.ws.Cache(), pluginsDir: u.PluginsDir}, fatal)
}

// controllerSetup is what a rehearsal's controllers are started with.
type controllerSetup struct {
	mirrors      source.Mirrors
	cacheDir     string
	stallTimeout time.Duration
	pluginsDir   string
}

// runControllers runs the Application controller, with the ApplicationSet
// and notifications controllers beside it, in process until ctx ends or the returned stop is
// called; stop waits for them. An exit of their own is sent to fatal.
func runControllers(ctx context.Context, cfg *rest.Config, c controllerSetup, fatal chan<- error) (stop func(), err error) {
	ctrl, err := controller.New(cfg, controller.Options{
		Namespace: Namespace, Mirrors: c.mirrors, CacheDir: c.cacheDir, StallTimeout: c.stallTimeout, PluginsDir: c.pluginsDir,
	})
	if err != nil {
		return nil, err
	}
	sets, err := appset.New(cfg, appset.Options{
		Namespace: Namespace, Mirrors: c.mirrors, CacheDir: filepath.Join(c.cacheDir, "applicationsets"), Apps: ctrl.AppCache(),
	})
	if err != nil {
		return nil, err
	}
	if err := ctrl.Add(sets); err != nil {
		return nil, err
	}
	notifications, err := notify.New(cfg, notify.Options{Namespace: Namespace, Apps: ctrl.AppCache()})
	if err != nil {
		return nil, err
	}
	if err := ctrl.Add(notifications); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := ctrl.Start(ctx)
		if ctx.Err() == nil {
			fatal <- fmt.Errorf("controller stopped: %w", err)
		}
	}()
	return func() {
		cancel()
		select {
		case <-done:
		case <-time.After(controllerStopTimeout):
		}
	}, nil
}

// loop prints the timeline and decides when the rehearsal is over.
func (u *Up) loop(ctx context.Context, p *timeline.Printer, t *timeline.Tracker, events <-chan timeline.Observation, fatal <-chan error) error {
	opts := timeline.SettleOptions{For: u.SettleFor, StallAfter: u.StallAfter}
	if u.ExitWhenSettled {
		opts.Timeout = u.Timeout
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	reported := timeline.Waiting
	for {
		select {
		case <-ctx.Done():
			p.Sayf("interrupted: stopping the controller")
			return u.finish(p, t, &NotSettledError{Reason: "interrupted", Waiting: t.Unsettled()}, reported != timeline.Settled)
		case err := <-fatal:
			return err
		case o := <-events:
			for _, l := range t.Observe(o) {
				p.Print(l)
			}
		case now := <-tick.C:
			v := t.Decide(now, opts)
			if v == reported {
				continue
			}
			reported = v
			if done, err := u.report(p, t, v, now); done {
				return err
			}
		}
	}
}

// report prints a new verdict and says whether the rehearsal is over.
func (u *Up) report(p *timeline.Printer, t *timeline.Tracker, v timeline.Decision, now time.Time) (bool, error) {
	var nse *NotSettledError
	switch v {
	case timeline.Settled:
		p.Sayf("settled: every app Synced and Healthy, no sync running")
		if !u.ExitWhenSettled {
			fmt.Fprintln(p.Out)
			_ = t.WriteSummary(p.Out)
			fmt.Fprintln(p.Out)
			return false, nil
		}
		return true, u.finish(p, t, nil, true)
	case timeline.Stalled:
		nse = &NotSettledError{Reason: fmt.Sprintf("stalled: nothing changed for %s", now.Sub(t.LastChange()).Round(time.Second))}
	case timeline.TimedOut:
		nse = &NotSettledError{Reason: fmt.Sprintf("not settled within %s", u.Timeout)}
	default:
		return false, nil
	}
	nse.Waiting = t.Unsettled()
	p.Sayf("%s", nse.Reason)
	for _, w := range nse.Waiting {
		p.Sayf("  waiting on %s", w)
	}
	if !u.ExitWhenSettled {
		return false, nil // reported; the rehearsal goes on until Ctrl-C
	}
	return true, u.finish(p, t, nse, true)
}

// finish prints the summary (unless it was just printed) and how to
// inspect the cluster. It returns nse when the rehearsal was to exit once
// settled and did not.
func (u *Up) finish(p *timeline.Printer, t *timeline.Tracker, nse *NotSettledError, summary bool) error {
	if summary {
		fmt.Fprintln(p.Out)
		_ = t.WriteSummary(p.Out)
	}
	ws, _ := NewWorkspace(u.Workspace)
	fmt.Fprintf(p.Out, "\nThe cluster keeps running: kubectl --kubeconfig %s get applications -n %s\n", displayPath(ws.Kubeconfig()), Namespace)
	fmt.Fprintln(p.Out, "wavecd down stops and removes it.")
	if nse == nil || !u.ExitWhenSettled {
		return nil
	}
	return nse
}
