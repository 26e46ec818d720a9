package notify

import (
	"fmt"
	"maps"
	"net/url"
	"strings"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// Env is what triggers and templates see besides the app: the AppProject,
// the clock, and what wavecd knows about the other apps.
type Env struct {
	// Project is the app's AppProject as an object (nil: {}).
	Project map[string]any
	// Now is the clock of time.Now (nil: time.Now).
	Now func() time.Time
	// Apps lists the Applications of the app's namespace, for the wavecd
	// functions that look at parents and children (nil: none).
	Apps func() []*v1alpha1.Application
}

// Vars builds the variables of a trigger or a template for app, as Argo
// CD names them: app, appProject, context (with notificationType and
// argocdUrl), secrets, serviceType and recipient (templates only), and
// the function namespaces time, strings, sync, repo and wavecd.
func (c *Config) Vars(app map[string]any, env Env, dest Destination) map[string]any {
	// argocdUrl is always there ("" until the context sets it), so links
	// in templates degrade to paths rather than "<no value>".
	ctx := map[string]string{"notificationType": dest.Service, "argocdUrl": ""}
	maps.Copy(ctx, c.Context)
	project := env.Project
	if project == nil {
		project = map[string]any{}
	}
	now := env.Now
	if now == nil {
		now = time.Now
	}
	return map[string]any{
		"app":         app,
		"appProject":  project,
		"context":     ctx,
		"secrets":     c.Secrets,
		"serviceType": dest.Service,
		"recipient":   dest.Recipient,
		"time":        timeFuncs(now),
		"strings":     stringsFuncs,
		"sync":        syncFuncs,
		"repo":        repoFuncs(app),
		"wavecd":      wavecdFuncs(app, env, now),
	}
}

// timeFuncs are Argo CD's time namespace: Now, Parse (RFC 3339), the
// durations and the layouts of Go's time package.
func timeFuncs(now func() time.Time) map[string]any {
	return map[string]any{
		"Now": now,
		"Parse": func(s string) time.Time {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				panic(err) // expr and text/template turn it into the expression's error
			}
			return t
		},
		"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond, "Millisecond": time.Millisecond,
		"Second": time.Second, "Minute": time.Minute, "Hour": time.Hour,
		"Layout": time.Layout, "ANSIC": time.ANSIC, "UnixDate": time.UnixDate, "RubyDate": time.RubyDate,
		"RFC822": time.RFC822, "RFC822Z": time.RFC822Z, "RFC850": time.RFC850, "RFC1123": time.RFC1123,
		"RFC1123Z": time.RFC1123Z, "RFC3339": time.RFC3339, "RFC3339Nano": time.RFC3339Nano, "Kitchen": time.Kitchen,
		"Stamp": time.Stamp, "StampMilli": time.StampMilli, "StampMicro": time.StampMicro, "StampNano": time.StampNano,
	}
}

// stringsFuncs are Argo CD's strings namespace.
var stringsFuncs = map[string]any{
	"ReplaceAll": strings.ReplaceAll,
	"ToUpper":    strings.ToUpper,
	"ToLower":    strings.ToLower,
}

// syncFuncs are Argo CD's sync namespace: GetInfoItem(app, name) reads
// an info item of the app's sync operation.
var syncFuncs = map[string]any{
	"GetInfoItem": func(app map[string]any, name string) string {
		for _, path := range [][]string{{"operation", "info"}, {"status", "operationState", "operation", "info"}} {
			items, _ := nested(app, path...).([]any)
			for _, it := range items {
				m, _ := it.(map[string]any)
				if m["name"] == name {
					v, _ := m["value"].(string)
					return v
				}
			}
		}
		return ""
	},
}

// repoFuncs are the offline part of Argo CD's repo namespace:
// RepoURLToHTTPS, FullNameByRepoURL and QueryEscape. GetCommitMetadata
// and GetAppDetails, which ask Argo CD's repo server, fail with a clear
// error.
func repoFuncs(map[string]any) map[string]any {
	unavailable := func(name string) func(...any) any {
		return func(...any) any {
			panic(fmt.Sprintf("repo.%s is not available in wavecd", name))
		}
	}
	return map[string]any{
		"RepoURLToHTTPS": repoURLToHTTPS,
		"FullNameByRepoURL": func(s string) string {
			name, err := fullNameByRepoURL(s)
			if err != nil {
				panic(err)
			}
			return name
		},
		"QueryEscape":       url.QueryEscape,
		"GetCommitMetadata": unavailable("GetCommitMetadata"),
		"GetAppDetails":     unavailable("GetAppDetails"),
	}
}

// repoURLToHTTPS turns a Git URL (ssh, scp-like or https) into its https
// form without credentials.
func repoURLToHTTPS(raw string) string {
	if !strings.Contains(raw, "://") {
		if userHost, p, ok := strings.Cut(raw, ":"); ok {
			_, host, found := strings.Cut(userHost, "@")
			if !found {
				host = userHost
			}
			return "https://" + host + "/" + strings.TrimPrefix(p, "/")
		}
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	u.Scheme, u.User = "https", nil
	if h := u.Hostname(); u.Port() == "22" {
		u.Host = h
	}
	return u.String()
}

// nested returns the value at path in obj, nil when absent.
func nested(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}
