package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/syncwindow"
)

const projWindowsListLong = `List the sync windows of an AppProject: for each, whether it is open now
(or at --at), when that next changes, and which apps it applies to.

A window is open from each start of its cron schedule (minute hour
day-of-month month day-of-week, in its time zone, UTC by default) for its
duration. An open deny window blocks syncs; where allow windows apply, syncs
run only while one is open; manualSync lets manual syncs through.`

const projWindowsListExample = `  # the windows of project default, as of now
  wavecd proj windows list default

  # which windows will be open tonight at 23:30 UTC
  wavecd proj windows list default --at 2026-01-05T23:30:00Z -o json`

func newProjWindowsCommand(s Streams, f *namespaceFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "windows",
		Aliases: []string{"window", "win"},
		Short:   "Inspect a project's sync windows",
	}
	cmd.AddCommand(newProjWindowsListCommand(s, f))
	return cmd
}

func newProjWindowsListCommand(s Streams, f *namespaceFlags) *cobra.Command {
	a := &projWindowsList{}
	var output, at string
	cmd := &cobra.Command{
		Use:     "list PROJECT",
		Aliases: []string{"ls"},
		Short:   "List a project's sync windows and whether they are open",
		Long:    projWindowsListLong,
		Example: projWindowsListExample,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := validateOutput(output, "wide", "json", "yaml"); err != nil {
				return err
			}
			a.Project, a.Namespace, a.At = args[0], f.namespace, time.Now()
			if at != "" {
				t, err := time.Parse(time.RFC3339, at)
				if err != nil {
					return fmt.Errorf("--at: want an RFC 3339 time such as 2026-01-05T23:30:00Z: %w", err)
				}
				a.At = t
			}
			_, r, err := f.connect()
			if err != nil {
				return err
			}
			a.Reader = r
			rows, err := a.Run(cmd.Context())
			if err != nil {
				return err
			}
			return printWindows(s.Out, output, rows)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "wide", "output format: wide, json or yaml")
	cmd.Flags().StringVar(&at, "at", "", "show the windows as of this time (RFC 3339) instead of now")
	return cmd
}

// projWindowsList reads a project's sync windows and their state at a time.
type projWindowsList struct {
	Reader    client.Reader
	Namespace string
	Project   string
	At        time.Time
}

// windowRow is one sync window as listed.
type windowRow struct {
	ID           int      `json:"id"`
	Kind         string   `json:"kind"`
	Schedule     string   `json:"schedule"`
	Duration     string   `json:"duration"`
	TimeZone     string   `json:"timeZone"`
	Active       bool     `json:"active"`
	NextChange   string   `json:"nextChange,omitempty"`
	Applications []string `json:"applications,omitempty"`
	Namespaces   []string `json:"namespaces,omitempty"`
	Clusters     []string `json:"clusters,omitempty"`
	ManualSync   bool     `json:"manualSync"`
	AndOperator  bool     `json:"andOperator"`
	Description  string   `json:"description,omitempty"`
	// Error says why the window does not parse; it then blocks every sync.
	Error string `json:"error,omitempty"`
}

// Run reads the project and evaluates its windows at a.At.
func (a *projWindowsList) Run(ctx context.Context) ([]windowRow, error) {
	proj := &v1alpha1.AppProject{}
	if err := a.Reader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.Project}, proj); err != nil {
		return nil, fmt.Errorf("read AppProject %s/%s: %w", a.Namespace, a.Project, err)
	}
	rows := []windowRow{}
	for i, spec := range proj.Spec.SyncWindows {
		if spec == nil {
			continue
		}
		row := windowRow{
			ID: i, Kind: spec.Kind, Schedule: spec.Schedule, Duration: spec.Duration, TimeZone: spec.TimeZone,
			Applications: spec.Applications, Namespaces: spec.Namespaces, Clusters: spec.Clusters,
			ManualSync: spec.ManualSync, AndOperator: spec.UseAndOperator, Description: spec.Description,
		}
		w, err := syncwindow.Parse(*spec)
		if err != nil {
			row.Error = err.Error()
			rows = append(rows, row)
			continue
		}
		row.TimeZone = w.Location().String()
		row.Active = w.Active(a.At)
		if next := w.NextChange(a.At); !next.IsZero() {
			row.NextChange = next.UTC().Format(time.RFC3339)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func printWindows(w io.Writer, output string, rows []windowRow) error {
	if output != "wide" {
		return printStructured(w, output, rows)
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tSTATUS\tKIND\tSCHEDULE\tDURATION\tTIMEZONE\tNEXT CHANGE\tAPPLICATIONS\tNAMESPACES\tCLUSTERS\tMANUALSYNC\tANDOPERATOR\tDESCRIPTION")
	for _, r := range rows {
		status, note := "Inactive", r.Description
		switch {
		case r.Error != "":
			status, note = "Invalid", r.Error
		case r.Active:
			status = "Active"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", strconv.Itoa(r.ID), status, r.Kind, r.Schedule, r.Duration,
			orDash(r.TimeZone), orDash(r.NextChange), joinOrDash(r.Applications), joinOrDash(r.Namespaces), joinOrDash(r.Clusters),
			enabled(r.ManualSync), enabled(r.AndOperator), note)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func joinOrDash(items []string) string { return orDash(strings.Join(items, ",")) }

func enabled(b bool) string {
	if b {
		return "Enabled"
	}
	return "Disabled"
}
