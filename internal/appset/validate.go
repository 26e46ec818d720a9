package appset

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/cluster"
)

// validate returns the generated apps that can be applied, and a problem
// for each that cannot: a duplicate or missing name, a project that does
// not exist (`default` is created by the Application controller when
// missing), a destination naming both a server and a cluster name, or a
// cluster name that is not registered. Invalid apps are neither applied
// nor deleted.
func (r *Reconciler) validate(ctx context.Context, set *v1alpha1.ApplicationSet, apps []v1alpha1.Application) ([]v1alpha1.Application, []string) {
	v := validator{r: r, ctx: ctx, projects: map[string]error{}}
	seen := map[string]bool{}
	var valid []v1alpha1.Application
	var problems []string
	for _, app := range apps {
		var problem string
		switch {
		case app.Name == "":
			problem = "ApplicationSet " + set.Name + " generated an application with an empty name"
		case seen[app.Name]:
			problem = fmt.Sprintf("ApplicationSet %s contains applications with duplicate name: %s", set.Name, app.Name)
		default:
			problem = v.check(&app)
		}
		seen[app.Name] = true
		if problem != "" {
			problems = append(problems, problem)
			continue
		}
		valid = append(valid, app)
	}
	return valid, problems
}

type validator struct {
	r        *Reconciler
	ctx      context.Context //nolint:containedctx // one validate call
	projects map[string]error
	clusters []cluster.Cluster
	listErr  error
	listed   bool
}

func (v *validator) check(app *v1alpha1.Application) string {
	project := app.Spec.Project
	if project == "" {
		project = "default"
	}
	if err := v.project(project); err != nil {
		return fmt.Sprintf("application %s: %v", app.Name, err)
	}
	d := app.Spec.Destination
	switch {
	case d.Name != "" && d.Server != "":
		return fmt.Sprintf("application %s: application destination spec is invalid: application destination can't have both name and server defined: %s %s", app.Name, d.Name, d.Server)
	case d.Name != "":
		if !v.hasCluster(d.Name) {
			msg := fmt.Sprintf("application %s: application destination spec is invalid: there are no clusters with this name: %s", app.Name, d.Name)
			if v.listErr != nil {
				msg += fmt.Sprintf(" (%v)", v.listErr)
			}
			return msg
		}
	}
	return ""
}

func (v *validator) project(name string) error {
	if err, ok := v.projects[name]; ok {
		return err
	}
	var err error
	if name != "default" {
		err = v.r.apiReader.Get(v.ctx, client.ObjectKey{Namespace: v.r.opts.Namespace, Name: name}, &v1alpha1.AppProject{})
		if apierrors.IsNotFound(err) {
			err = fmt.Errorf("application references project %s which does not exist", name)
		} else if err != nil {
			err = fmt.Errorf("read AppProject %s: %w", name, err)
		}
	}
	v.projects[name] = err
	return err
}

func (v *validator) hasCluster(name string) bool {
	if !v.listed {
		v.clusters, v.listErr = v.r.clusters.List(v.ctx)
		v.listed = true
	}
	for _, c := range v.clusters {
		if c.Name == name {
			return true
		}
	}
	return false
}
