package server

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/application"
	"github.com/wavecd/wavecd/internal/hook"
)

// Annotations the pictures read from an Application.
// maxFamilyDepth bounds how deep a family follows child apps, as
// appclient.Get does.
const maxFamilyDepth = 10

// family is every app the user may see, read with one list, and who
// parents whom: an app's children are the Applications its
// status.resources lists and those an ApplicationSet it lists generated
// (the set is their controller owner).
type family struct {
	byName map[string]*v1alpha1.Application
	bySet  map[string][]*v1alpha1.Application
	// linkNS is the namespace of the apps, for their links ("": the
	// control namespace).
	linkNS string
}

// newFamily is the family of apps, all of one namespace: linkNS, or the
// control namespace when empty.
func newFamily(apps []v1alpha1.Application, linkNS string) *family {
	f := &family{byName: make(map[string]*v1alpha1.Application, len(apps)), bySet: map[string][]*v1alpha1.Application{}, linkNS: linkNS}
	for i := range apps {
		a := &apps[i]
		f.byName[a.Name] = a
		for _, o := range a.OwnerReferences {
			if o.Kind == v1alpha1.ApplicationSetKind && strings.HasPrefix(o.APIVersion, v1alpha1.Group+"/") && o.Controller != nil && *o.Controller {
				f.bySet[o.Name] = append(f.bySet[o.Name], a)
			}
		}
	}
	return f
}

// member is one app of a tree, with where it sits.
type member struct {
	App *v1alpha1.Application
	// Parent is the parent app's name; empty for the tree's root.
	Parent string
	// Set is the ApplicationSet between the parent and the app, if any.
	Set string
	// Wave is the app's wave in its parent.
	Wave  int64
	Depth int
	// Children are sorted by wave, then name.
	Children []*member
	// Hold is the stall that holds the app, nil when none does.
	Hold *hold
	// LinkNS is the app's namespace for its links ("": the control
	// namespace).
	LinkNS string
}

// hold is a stall that holds an app: its own sync's (SyncStalled), or its
// parent's, whose stalled wave waits on it.
type hold struct {
	// Reason says why, without "stalled: ".
	Reason string
	Since  time.Time
	// Own is set for the app's own stall; otherwise Parent's wave Wave
	// waits on the app.
	Own    bool
	Parent string
	Wave   int
}

// text is the stall as the pictures say it: the parent's wave an app
// holds, or its own wave, what that waits on and why.
func (h *hold) text(app string) string {
	if !h.Own {
		return fmt.Sprintf("holds wave %d of %s: %s", h.Wave, h.Parent, h.Reason)
	}
	return strings.Replace(h.Reason, " of "+app+" waits on ", " waits on ", 1)
}

// markHolds records the stalls of mb and of the children its stalled
// wave waits on; parents are visited before their children, so a child's
// own stall wins.
func (mb *member) markHolds() {
	if c := application.Condition(mb.App, v1alpha1.ApplicationConditionSyncStalled); c != nil {
		mb.Hold = &hold{Reason: strings.TrimPrefix(c.Message, "stalled: "), Own: true}
		if c.LastTransitionTime != nil {
			mb.Hold.Since = c.LastTransitionTime.Time
		}
	}
	st := application.ProgressOf(mb.App.Status.OperationState)
	if st == nil || st.Stalled == "" || mb.Hold == nil {
		return
	}
	for _, t := range st.Tasks {
		if t.SyncPhase != st.SyncPhase || t.Wave != st.Wave || !application.IsApplication(t.Group, t.Kind) ||
			(t.Phase != v1alpha1.TaskApplied && t.Phase != v1alpha1.TaskRunning) {
			continue
		}
		for _, c := range mb.Children {
			if c.App.Name != t.Name || c.Set != "" {
				continue
			}
			reason := st.Stalled
			if _, after, ok := strings.Cut(reason, " Application "+c.App.Name+": "); ok {
				reason = after
			}
			c.Hold = &hold{Reason: reason, Since: mb.Hold.Since, Parent: mb.App.Name, Wave: st.Wave}
		}
	}
}

// tree returns the app named root with the apps under it; nil when the
// user may not see it. An app shows once, under the first parent found.
func (f *family) tree(root string) *member {
	app := f.byName[root]
	if app == nil {
		return nil
	}
	m := &member{App: app, LinkNS: f.linkNS}
	seen := map[string]bool{root: true}
	queue := []*member{m}
	for len(queue) > 0 { // breadth first: an app sits at its shallowest place
		cur := queue[0]
		queue = queue[1:]
		if cur.Depth >= maxFamilyDepth {
			continue
		}
		for _, c := range f.children(cur.App) {
			if seen[c.App.Name] {
				continue
			}
			seen[c.App.Name] = true
			c.Parent, c.Depth, c.LinkNS = cur.App.Name, cur.Depth+1, f.linkNS
			cur.Children = append(cur.Children, c)
			queue = append(queue, c)
		}
		slices.SortStableFunc(cur.Children, func(a, b *member) int {
			return cmp.Or(cmp.Compare(a.Wave, b.Wave), strings.Compare(a.App.Name, b.App.Name))
		})
	}
	m.walk((*member).markHolds)
	return m
}

// children are the apps app manages, directly or through an
// ApplicationSet, with their waves.
func (f *family) children(app *v1alpha1.Application) []*member {
	var out []*member
	for _, r := range app.Status.Resources {
		if r.Namespace != "" && r.Namespace != app.Namespace {
			continue
		}
		switch {
		case application.IsApplication(r.Group, r.Kind):
			if c := f.byName[r.Name]; c != nil {
				out = append(out, &member{App: c, Wave: r.SyncWave})
			}
		case r.Group == v1alpha1.Group && r.Kind == v1alpha1.ApplicationSetKind:
			for _, c := range f.bySet[r.Name] {
				out = append(out, &member{App: c, Set: r.Name, Wave: int64(hook.Wave(c))})
			}
		}
	}
	return out
}

// walk visits m and the apps under it, parents first, children by wave.
func (m *member) walk(fn func(*member)) {
	fn(m)
	for _, c := range m.Children {
		c.walk(fn)
	}
}

// size counts m and the apps under it.
func (m *member) size() int {
	n := 0
	m.walk(func(*member) { n++ })
	return n
}

// appTree is m as appclient.AppTree, for the resource tree: children
// nested when the whole tree has at most nest apps, none otherwise.
func (m *member) appTree(nest int) *appclient.AppTree {
	t := &appclient.AppTree{App: m.App, Children: map[string]*appclient.AppTree{}}
	if m.size() > nest {
		return t
	}
	for _, c := range m.Children {
		if c.Set == "" {
			t.Children[c.App.Name] = c.appTree(nest)
		}
	}
	return t
}
