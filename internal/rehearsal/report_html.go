package rehearsal

import (
	"fmt"
	"html/template"
	"io"
	"math"
)

// htmlRun is one run as the HTML report shows it.
type htmlRun struct {
	RunResult
	Headline string
	Apps     appChart
	Series   seriesChart
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
}

// WriteHTML writes the report as one self-contained HTML page: inline CSS
// and SVG, no script and nothing fetched.
func WriteHTML(w io.Writer, rep *Report) error {
	v := htmlView{Report: rep, Class: "bad"}
	longest := 1.0
	for _, r := range rep.Runs {
		longest = math.Max(longest, r.End)
	}
	for _, r := range rep.Runs {
		v.Webhook = v.Webhook || r.WebhookRefused > 0
		v.Items = append(v.Items, htmlRun{
			RunResult: r, Headline: r.headline(), Apps: buildAppChart(r), Series: buildSeriesChart(r),
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
	"secs": secondsOrDash,
	"add":  func(a, b float64) float64 { return a + b },
}).Parse(reportHTML))

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
svg { display: block; margin: 6px 0; font: 12px system-ui, sans-serif; }
svg .label { fill: #1f2933; }
svg .axis { stroke: #9aa5b1; stroke-width: 1; }
svg .grid { stroke: #e4e7eb; stroke-width: 1; }
svg .ticklabel { fill: #7b8794; font-size: 11px; }
svg .created { stroke: #9aa5b1; stroke-width: 2; stroke-dasharray: 2 3; }
svg .bar.healthy { fill: #31b237; } svg .bar.waiting { fill: #f0b429; } svg .bar.stalled { fill: url(#hatch); }
svg .bar.never { fill: #f5f7fa; stroke: #cbd2d9; stroke-dasharray: 4 3; } svg .nevertext { fill: #7b8794; font-style: italic; }
svg .stallmark { fill: #e12d39; }
svg .verdictline { stroke: #1f2933; stroke-width: 1.5; stroke-dasharray: 5 4; }
svg .verdicttext { fill: #1f2933; font-weight: 600; }
svg polyline { fill: none; stroke-width: 2.5; }
svg polyline.nodes { stroke: #2680c2; stroke-width: 6; stroke-opacity: 0.45; } svg polyline.ready { stroke: #31b237; stroke-dasharray: 6 3; }
svg polyline.pending { stroke: #f0b429; } svg polygon.pending { fill: #f0b429; fill-opacity: 0.25; stroke: none; } svg polyline.unschedulable { stroke: #e12d39; stroke-dasharray: 2 3; }
.legend span { display: inline-block; margin-right: 14px; } .legend i { display: inline-block; width: 18px; height: 4px; margin-right: 5px; vertical-align: middle; }
.k-nodes { background: #2680c2; } .k-ready { background: #31b237; } .k-pending { background: #f0b429; } .k-unschedulable { background: #e12d39; }
.k-healthy { background: #31b237; height: 10px !important; } .k-waiting { background: #f0b429; height: 10px !important; } .k-stalled { background: repeating-linear-gradient(45deg, #e12d39 0 3px, #ffbdbd 3px 6px); height: 10px !important; }
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
{{if not .StalledApps}}{{range .Waiting}}<br>waiting on <code>{{.}}</code>{{end}}{{end}}</div>{{end}}
<div class="legend"><span><i class="k-healthy"></i>sync start until Synced and Healthy</span><span><i class="k-waiting"></i>waiting: not Synced and Healthy yet</span><span><i class="k-stalled"></i>stalled (SyncStalled)</span><span>- - - {{.Headline}}</span></div>
<svg width="{{.Apps.Width}}" height="{{.Apps.Height}}" viewBox="0 0 {{.Apps.Width}} {{.Apps.Height}}" role="img" aria-label="apps by wave over time">
<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffbdbd"/><rect width="3" height="6" fill="#e12d39"/></pattern></defs>
{{$apps := .Apps}}{{range .Apps.Ticks}}<line class="grid" x1="{{.X}}" y1="4" x2="{{.X}}" y2="{{$apps.PlotBottom}}"/><text class="ticklabel" x="{{.X}}" y="{{add $apps.PlotBottom 16}}" text-anchor="middle">{{.Label}}</text>
{{end}}<line class="axis" x1="{{.Apps.PlotLeft}}" y1="{{.Apps.PlotBottom}}" x2="{{add .Apps.PlotLeft 700}}" y2="{{.Apps.PlotBottom}}"/>
{{range .Apps.Rows}}<g><title>{{.Title}}</title>
<text class="label" x="4" y="{{add .Y 19}}">{{.Label}}</text>
{{if .Never}}<rect class="bar never" x="{{.X}}" y="{{add .Y 6}}" width="700" height="18" rx="3"/><text class="nevertext" x="{{add .X 8}}" y="{{add .Y 19}}">never created</text>
{{else}}<line class="created" x1="{{.CreatedX}}" y1="{{add .Y 15}}" x2="{{.X}}" y2="{{add .Y 15}}"/>
<rect class="bar {{.Class}}" x="{{.X}}" y="{{add .Y 6}}" width="{{.W}}" height="18" rx="3"/>
{{if .StallW}}<rect class="bar stalled" x="{{.StallX}}" y="{{add .Y 6}}" width="{{.StallW}}" height="18" rx="3"/><circle class="stallmark" cx="{{.StallX}}" cy="{{add .Y 15}}" r="6"/>{{end}}{{end}}</g>
{{end}}<line class="verdictline" x1="{{.Apps.VerdictX}}" y1="2" x2="{{.Apps.VerdictX}}" y2="{{.Apps.PlotBottom}}"/>
</svg>
<div class="legend"><span><i class="k-nodes"></i>nodes</span><span><i class="k-ready"></i>Ready nodes</span><span><i class="k-pending"></i>pending pods</span><span><i class="k-unschedulable"></i>unschedulable pods</span></div>
<svg width="{{.Series.Width}}" height="{{.Series.Height}}" viewBox="0 0 {{.Series.Width}} {{.Series.Height}}" role="img" aria-label="nodes and pending pods over time">
{{$s := .Series}}{{range .Series.Ticks}}<line class="grid" x1="{{.X}}" y1="{{10}}" x2="{{.X}}" y2="{{$s.PlotBottom}}"/><text class="ticklabel" x="{{.X}}" y="{{add $s.PlotBottom 16}}" text-anchor="middle">{{.Label}}</text>
{{end}}{{range .Series.YTicks}}<line class="grid" x1="{{$s.PlotLeft}}" y1="{{.Y}}" x2="{{add $s.PlotLeft 700}}" y2="{{.Y}}"/><text class="ticklabel" x="{{add $s.PlotLeft -8}}" y="{{add .Y 4}}" text-anchor="end">{{.Label}}</text>
{{end}}{{range .Series.Lines}}{{if .Area}}<polygon class="{{.Class}}" points="{{.Area}}"/>{{end}}<polyline class="{{.Class}}" points="{{.Points}}"><title>{{.Name}}: {{.Last}} at the end</title></polyline>
{{end}}<text class="label" x="4" y="24">nodes / pods</text>
</svg>
{{if .Drawn}}<p>Drawn from seed {{.Seed}}: {{range $k, $v := .Drawn}}<code>{{$k}}={{$v}}</code> {{end}}</p>{{end}}
{{if .WebhookRefused}}<p>The webhook refused {{.WebhookRefused}} calls while no backend pod was Ready.</p>{{end}}
<table>
<tr><th>App</th><th>Wave</th><th>Created</th><th>Sync started</th><th>Healthy at</th><th>Status</th></tr>
{{range .Apps.Rows}}{{end}}{{range .RunResult.Apps}}<tr><td>{{.Name}}</td><td>{{if .Root}}-{{else}}{{.Wave}}{{end}}</td><td>{{secs .Created}}</td><td>{{secs .SyncStarted}}</td><td>{{secs .Healthy}}</td><td>{{.Status}}</td></tr>
{{end}}</table>
<details><summary>Timeline ({{len .Timeline}} lines)</summary><pre>{{range .Timeline}}{{.}}
{{end}}</pre></details>
{{end}}
<p class="desc">Times are seconds since the root Application was applied. Written by wavecd rehearse.</p>
</body>
</html>
`
