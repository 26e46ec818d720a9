package cli

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/application"
)

// table is a tabwriter whose Flush drops the padding at the end of lines,
// which empty last columns leave behind.
type table struct {
	*tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

func newTable(w io.Writer) *table {
	t := &table{out: w}
	t.Writer = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	return t
}

// Flush aligns the rows and writes them without trailing spaces.
func (t *table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	lines := strings.SplitAfter(t.buf.String(), "\n")
	t.buf.Reset()
	for _, line := range lines {
		trimmed := strings.TrimRight(line, " \n")
		if strings.HasSuffix(line, "\n") {
			trimmed += "\n"
		}
		if _, err := io.WriteString(t.out, trimmed); err != nil {
			return err
		}
	}
	return nil
}

// summaryFormat aligns `Key:  value` lines like argocd app get.
const summaryFormat = "%-20s%s\n"

var commitSHA = regexp.MustCompile(`^[0-9a-fA-F]{7,64}$`)

// printAppSummary prints the key/value block of argocd app get.
func printAppSummary(w io.Writer, app *v1alpha1.Application) {
	fmt.Fprintf(w, summaryFormat, "Name:", qualifiedName(app))
	fmt.Fprintf(w, summaryFormat, "Project:", app.Spec.Project)
	fmt.Fprintf(w, summaryFormat, "Server:", destinationCluster(app))
	fmt.Fprintf(w, summaryFormat, "Namespace:", app.Spec.Destination.Namespace)
	if app.Spec.HasMultipleSources() {
		fmt.Fprintln(w, "Sources:")
	} else {
		fmt.Fprintln(w, "Source:")
	}
	for _, src := range app.Spec.GetSources() {
		printSource(w, &src)
	}
	fmt.Fprintf(w, summaryFormat, "SyncWindow:", "n/a")
	fmt.Fprintf(w, summaryFormat, "Sync Policy:", syncPolicyDetail(app))
	fmt.Fprintf(w, summaryFormat, "Sync Status:", syncStatusDetail(app))
	health := string(app.Status.Health.Status)
	if app.Status.Health.Message != "" {
		health = fmt.Sprintf("%s (%s)", health, app.Status.Health.Message)
	}
	fmt.Fprintf(w, summaryFormat, "Health Status:", health)
}

func printSource(w io.Writer, src *v1alpha1.ApplicationSource) {
	fmt.Fprintf(w, summaryFormat, "- Repo:", src.RepoURL)
	fmt.Fprintf(w, summaryFormat, "  Target:", src.TargetRevision)
	if src.Path != "" {
		fmt.Fprintf(w, summaryFormat, "  Path:", src.Path)
	}
	if src.Chart != "" {
		fmt.Fprintf(w, summaryFormat, "  Chart:", src.Chart)
	}
	if src.Ref != "" {
		fmt.Fprintf(w, summaryFormat, "  Ref:", src.Ref)
	}
	if src.Helm != nil && len(src.Helm.ValueFiles) > 0 {
		fmt.Fprintf(w, summaryFormat, "  Helm Values:", strings.Join(src.Helm.ValueFiles, ","))
	}
}

// syncPolicyDetail is `Manual` or `Automated` with its options.
func syncPolicyDetail(app *v1alpha1.Application) string {
	if !app.Spec.SyncPolicy.IsAutomated() {
		return "Manual"
	}
	var opts []string
	a := app.Spec.SyncPolicy.Automated
	for _, o := range []struct {
		on   bool
		name string
	}{{a.Prune, "Prune"}, {a.SelfHeal, "Self Heal"}, {a.AllowEmpty, "Allow Empty"}} {
		if o.on {
			opts = append(opts, o.name)
		}
	}
	if len(opts) == 0 {
		return "Automated"
	}
	return "Automated (" + strings.Join(opts, ", ") + ")"
}

// syncStatusDetail is `Synced to main (1a2b3c4)` like argocd app get.
func syncStatusDetail(app *v1alpha1.Application) string {
	target := firstSource(app).TargetRevision
	if target == "" {
		target = "HEAD"
	}
	s := string(app.Status.Sync.Status)
	switch app.Status.Sync.Status {
	case v1alpha1.SyncStatusCodeSynced:
		s += " to " + target
	case v1alpha1.SyncStatusCodeOutOfSync:
		s += " from " + target
	default: // an Unknown status names no target
	}
	if rev := app.Status.Sync.Revision; !commitSHA.MatchString(target) && len(rev) > 7 {
		s += " (" + rev[:7] + ")"
	}
	return s
}

// printOperationState prints the last operation like argocd app get
// --show-operation.
func printOperationState(w io.Writer, st *v1alpha1.OperationState) {
	if st.SyncResult != nil || st.Operation.Sync != nil {
		fmt.Fprintf(w, summaryFormat, "Operation:", "Sync")
	}
	if r := st.SyncResult; r != nil {
		rev := r.Revision
		if len(r.Revisions) > 0 {
			rev = strings.Join(r.Revisions, ", ")
		}
		fmt.Fprintf(w, summaryFormat, "Sync Revision:", rev)
	}
	fmt.Fprintf(w, summaryFormat, "Phase:", st.Phase)
	fmt.Fprintf(w, summaryFormat, "Start:", formatTime(st.StartedAt))
	fmt.Fprintf(w, summaryFormat, "Finished:", formatTimePtr(st.FinishedAt))
	if st.FinishedAt != nil {
		fmt.Fprintf(w, summaryFormat, "Duration:", st.FinishedAt.Sub(st.StartedAt.Time).Round(time.Second))
	}
	if st.Message != "" {
		fmt.Fprintf(w, summaryFormat, "Message:", st.Message)
	}
}

// resourceRow is one row of the object table or tree; prefix draws the
// nesting under a child Application.
type resourceRow struct {
	prefix string
	appclient.ResourceState
}

// resourceRows lists t's objects and, under each child Application that
// exists, the child's objects.
func resourceRows(t *appclient.AppTree, indent string, rows []resourceRow, nested bool) []resourceRow {
	states := appclient.ResourceStates(t.App)
	for i, st := range states {
		prefix, next := "", ""
		if nested {
			last := i == len(states)-1
			prefix, next = indent+"├─ ", indent+"│  "
			if last {
				prefix, next = indent+"└─ ", indent+"   "
			}
		}
		rows = append(rows, resourceRow{prefix: prefix, ResourceState: st})
		if child, ok := t.Children[st.Name]; ok && application.IsApplication(st.Group, st.Kind) {
			rows = resourceRows(child, next, rows, true)
		}
	}
	return rows
}

func printResourceTable(w io.Writer, t *appclient.AppTree) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "GROUP\tKIND\tNAMESPACE\tNAME\tSTATUS\tHEALTH\tHOOK\tMESSAGE")
	for _, r := range resourceRows(t, "", nil, false) {
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			r.prefix, r.Group, r.Kind, r.Namespace, r.Name, r.Status, r.Health, r.Hook, r.Message)
	}
	return tw.Flush()
}

func printResourceTree(w io.Writer, t *appclient.AppTree) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "KIND/NAME\tSTATUS\tHEALTH\tMESSAGE")
	for _, r := range resourceRows(t, "", nil, false) {
		fmt.Fprintf(tw, "%s%s/%s\t%s\t%s\t%s\n", r.prefix, r.Kind, r.Name, r.Status, r.Health, r.Message)
	}
	return tw.Flush()
}

// printHistory prints status.history grouped by source repository, like
// argocd app history.
func printHistory(w io.Writer, history v1alpha1.RevisionHistories) error {
	type entry struct{ id, date, revision string }
	byRepo := map[string][]entry{}
	var repos []string
	add := func(repo string, e entry) {
		if !slices.Contains(repos, repo) {
			repos = append(repos, repo)
		}
		byRepo[repo] = append(byRepo[repo], e)
	}
	for _, h := range history {
		id, date := fmt.Sprint(h.ID), formatTime(h.DeployedAt)
		if len(h.Sources) > 0 {
			for i, src := range h.Sources {
				rev := ""
				if len(h.Revisions) == len(h.Sources) {
					rev = h.Revisions[i]
				}
				add(src.RepoURL, entry{id, date, revisionWithCommit(src.TargetRevision, rev)})
			}
			continue
		}
		add(h.Source.RepoURL, entry{id, date, revisionWithCommit(h.Source.TargetRevision, h.Revision)})
	}
	tw := newTable(w)
	for i, repo := range repos {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "SOURCE\t%s\nID\tDATE\tREVISION\n", repo)
		for _, e := range byRepo[repo] {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", e.id, e.date, e.revision)
		}
	}
	return tw.Flush()
}

// revisionWithCommit is `main (1a2b3c4)`.
func revisionWithCommit(target, commit string) string {
	if len(commit) >= 7 {
		return fmt.Sprintf("%s (%s)", target, commit[:7])
	}
	return target
}

// formatTime prints a time in the local zone, like Argo CD's CLI.
func formatTime(t metav1.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05 -0700 MST")
}

func formatTimePtr(t *metav1.Time) string {
	if t == nil {
		return ""
	}
	return formatTime(*t)
}
