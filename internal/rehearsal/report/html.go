package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"net/url"
	"path/filepath"

	"github.com/wavecd/wavecd/internal/diagram"
)

// htmlRun is one run as the HTML report shows it.
type htmlRun struct {
	RunResult
	Headline string
	// Apps and Series are the run's charts, drawn by internal/diagram.
	Apps, Series template.HTML
	// BarPercent is the run's time as a share of the longest run.
	BarPercent float64
}

// htmlView is what the HTML template reads.
type htmlView struct {
	*Report
	Verdict  string
	Class    string
	Expected string
	Items    []htmlRun
	// Webhook is set when a run's webhook refused calls.
	Webhook bool
	// ChartCSS styles the charts.
	ChartCSS template.CSS
}

// WriteHTML writes the report as one self-contained HTML page: inline CSS
// and SVG, no script and nothing fetched.
func WriteHTML(w io.Writer, rep *Report) error {
	v := htmlView{Report: rep, Class: "bad", ChartCSS: template.CSS(diagram.CSS)} // #nosec G203 -- the package's own stylesheet
	longest := 1.0
	for _, r := range rep.Runs {
		longest = math.Max(longest, r.End)
	}
	for _, r := range rep.Runs {
		v.Webhook = v.Webhook || r.WebhookRefused > 0
		apps := appChart(r)
		appsSVG, err := apps.SVG()
		if err != nil {
			return err
		}
		series := seriesChart(r)
		seriesSVG, err := series.SVG()
		if err != nil {
			return err
		}
		v.Items = append(v.Items, htmlRun{
			RunResult: r, Headline: r.headline(), Apps: appsSVG, Series: seriesSVG,
			BarPercent: round1(100 * math.Max(r.At, 0.5) / longest),
		})
	}
	switch s := rep.Summary; {
	case len(rep.Runs) == 1:
		v.Verdict = rep.Runs[0].headline()
	default:
		v.Verdict = fmt.Sprintf("%d of %d runs converged, %d stalled", s.Converged, s.Runs, s.Stalled)
		if s.TimedOut > 0 {
			v.Verdict += fmt.Sprintf(", %d timed out", s.TimedOut)
		}
	}
	if rep.AllConverged() {
		v.Class = "ok"
	}
	if rep.Expect != "" && len(rep.Runs) == 1 {
		v.Expected = "expected " + rep.Expect
		if string(rep.Runs[0].Verdict) == rep.Expect {
			v.Expected = "as expected"
		}
	}
	return reportTemplate.Execute(w, v)
}

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"secs":    secondsOrDash,
	"base":    filepath.Base,
	"fileURL": fileURL,
}).Parse(reportHTML))

// fileURL is a link to a local file.
func fileURL(path string) template.URL {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	return template.URL(u.String()) //nolint:gosec // a path the run wrote, escaped by url.URL
}

const reportHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>wavecd rehearse {{.Scenario}}: {{.Verdict}}</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 960px; color: #1f2933; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; }
.desc { color: #52606d; margin: 0 0 16px; }
.verdict { padding: 12px 16px; border-radius: 6px; font-size: 18px; font-weight: 600; }
.verdict.ok { background: #e3f9e5; color: #05400a; border-left: 6px solid #31b237; }
.verdict.bad { background: #ffeeee; color: #610404; border-left: 6px solid #e12d39; }
.verdict small { font-weight: 400; font-size: 14px; margin-left: 8px; }
.reason { background: #fffbea; border-left: 6px solid #f0b429; padding: 10px 16px; margin: 12px 0; border-radius: 6px; }
.reason code { white-space: pre-wrap; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { text-align: left; padding: 3px 12px 3px 0; vertical-align: top; }
th { color: #52606d; font-weight: 600; font-size: 12px; text-transform: uppercase; }
.runbar { background: #eee; width: 260px; height: 12px; border-radius: 3px; }
.runbar div { height: 12px; border-radius: 3px; }
.runbar .converged { background: #31b237; } .runbar .stalled, .runbar .timed { background: #e12d39; }
{{.ChartCSS}}
svg polyline.nodes { stroke: #2680c2; stroke-width: 6; stroke-opacity: 0.45; } svg polyline.ready { stroke: #31b237; stroke-dasharray: 6 3; }
svg polyline.pending { stroke: #f0b429; } svg polygon.pending { fill: #f0b429; fill-opacity: 0.25; stroke: none; } svg polyline.unschedulable { stroke: #e12d39; stroke-dasharray: 2 3; }
.legend span { display: inline-block; margin-right: 14px; } .legend i { display: inline-block; width: 18px; height: 4px; margin-right: 5px; vertical-align: middle; }
.k-nodes { background: #2680c2; } .k-ready { background: #31b237; } .k-pending { background: #f0b429; } .k-unschedulable { background: #e12d39; }
details { margin: 10px 0; } pre { background: #f5f7fa; padding: 10px; overflow-x: auto; font-size: 12px; }
</style>
</head>
<body>
<h1>Rehearsal of scenario {{.Scenario}}</h1>
<p class="desc">{{.Description}}</p>
<div class="verdict {{.Class}}">{{.Verdict}}{{if .Expected}}<small>{{.Expected}}</small>{{end}}</div>
{{if gt (len .Runs) 1}}
<h2>Runs</h2>
<p>{{.Summary.Converged}} converged{{with .Summary.ConvergedIn}} (in {{index . 0}}s to {{index . 2}}s, median {{index . 1}}s){{end}}, {{.Summary.Stalled}} stalled{{with .Summary.StalledAt}} (at {{index . 0}}s to {{index . 2}}s){{end}}{{if .Summary.TimedOut}}, {{.Summary.TimedOut}} timed out{{end}}.</p>
<table>
<tr><th>Run</th><th>Seed</th><th>Verdict</th><th>Time</th><th></th>{{if .Webhook}}<th>Webhook refused</th>{{end}}<th>Reason</th></tr>
{{$webhook := .Webhook}}{{range .Items}}<tr><td><a href="#run-{{.Run}}">{{.Run}}</a></td><td>{{.Seed}}</td><td>{{.Verdict}}</td><td>{{printf "%.1f" .At}}s</td>
<td><div class="runbar"><div class="{{.Verdict}}" style="width: {{.BarPercent}}%"></div></div></td>{{if $webhook}}<td>{{.WebhookRefused}}</td>{{end}}<td>{{.Reason}}</td></tr>
{{end}}</table>
{{end}}
{{range .Items}}
<h2 id="run-{{.Run}}">Run {{.Run}} (seed {{.Seed}}): {{.Headline}}</h2>
{{if .Reason}}<div class="reason"><strong>Why:</strong> <code>{{.Reason}}</code>
{{$reason := .Reason}}{{range .StalledApps}}{{if ne .Message $reason}}<br><strong>{{.App}}</strong> stalled too: <code>{{.Message}}</code>{{end}}{{end}}
{{if not .StalledApps}}{{range .Waiting}}<br>waiting on <code>{{.}}</code>{{end}}{{end}}
{{range .Operators}}<br>operator reports <code>{{.}}</code>{{end}}</div>{{end}}
{{.Apps}}
<div class="legend"><span><i class="k-nodes"></i>nodes</span><span><i class="k-ready"></i>Ready nodes</span><span><i class="k-pending"></i>pending pods</span><span><i class="k-unschedulable"></i>unschedulable pods</span></div>
{{.Series}}
{{if .Drawn}}<p>Drawn from seed {{.Seed}}: {{range $k, $v := .Drawn}}<code>{{$k}}={{$v}}</code> {{end}}</p>{{end}}
{{if .WebhookRefused}}<p>The webhook refused {{.WebhookRefused}} calls while no backend pod was Ready.</p>{{end}}
<table>
<tr><th>App</th><th>Wave</th><th>Created</th><th>Sync started</th><th>Healthy at</th><th>Status</th></tr>
{{range .RunResult.Apps}}<tr><td>{{.Name}}</td><td>{{if .Root}}-{{else}}{{.Wave}}{{end}}</td><td>{{secs .Created}}</td><td>{{secs .SyncStarted}}</td><td>{{secs .Healthy}}</td><td>{{.Status}}</td></tr>
{{end}}</table>
{{if .Logs}}<p>Output of the processes that ran pods: {{range .Logs}}<a href="{{fileURL .}}">{{base .}}</a> {{end}}</p>{{end}}
<details><summary>Timeline ({{len .Timeline}} lines)</summary><pre>{{range .Timeline}}{{.}}
{{end}}</pre></details>
{{end}}
<p class="desc">Times are seconds since the root Application was applied. Written by wavecd rehearse.</p>
</body>
</html>
`
