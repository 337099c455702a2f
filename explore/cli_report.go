package explore

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"time"
)

// reportRow is one scenario's row of the HTML report.
type reportRow struct {
	Scenario, Verdict, Property string
	Shards                      string
	Schedules, States           int
	FaultsExplored              string // "-" for a sampling strategy, "none" for -1
	Time                        string
	Trace                       string // as the result names it
	TraceHref                   string // relative to the report's directory; "" when none
	Error                       string
}

// reportData is everything the HTML report shows.
type reportData struct {
	Generated string
	Inputs    []string
	Rows      []reportRow
	Counts    []verdictCount
	Total     int
	Schedules int
	States    int
	Status    int
	StatusMsg string
}

type verdictCount struct {
	Verdict string
	N       int
}

// statusMeaning says what merge's exit status means.
func statusMeaning(status int) string {
	switch status {
	case exitOK:
		return "no violation"
	case exitViolation:
		return "a violation was found"
	}
	return "a harness error (a shard reported an error)"
}

// reportTemplate is self-contained: inline style, no script, nothing loaded
// from the network (the CSP forbids it). html/template escapes every string.
var reportTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>opcheck report: exit {{.Status}} ({{.StatusMsg}})</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse}
th,td{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}
td.n{text-align:right}
.violation{background:#fdd}.error{background:#fec}.verified{background:#dfd}.inconclusive{background:#eee}
.status{font-size:1.2em;font-weight:bold}
</style>
</head>
<body>
<h1>opcheck report</h1>
<p class="status" id="status">exit status {{.Status}}: {{.StatusMsg}}</p>
<p id="totals">{{.Total}} scenarios:{{range .Counts}} {{.N}} {{.Verdict}};{{end}} {{.Schedules}} schedules, {{.States}} states.</p>
<p>Generated {{.Generated}} by <code>explore merge</code> from{{range .Inputs}} <code>{{.}}</code>{{end}}.</p>
<table id="verdicts">
<thead><tr><th>scenario</th><th>verdict</th><th>property</th><th>shards</th><th>schedules</th><th>states</th><th title="every schedule with at most this many faults ran clean (exhaustive)">faults explored</th><th>time</th><th>trace</th></tr></thead>
<tbody>
{{range .Rows}}<tr class="{{.Verdict}}"><td>{{.Scenario}}</td><td>{{.Verdict}}</td><td>{{if .Property}}{{.Property}}{{else}}-{{end}}{{if .Error}}<br>error: {{.Error}}{{end}}</td><td>{{.Shards}}</td><td class="n">{{.Schedules}}</td><td class="n">{{.States}}</td><td class="n">{{.FaultsExplored}}</td><td class="n">{{.Time}}</td><td>{{if .TraceHref}}<a href="{{.TraceHref}}">{{.Trace}}</a>{{else if .Trace}}{{.Trace}}{{else}}-{{end}}</td></tr>
{{end}}</tbody>
</table>
</body>
</html>
`))

// traceHref is the trace's path relative to dir (the report's directory),
// slash-separated, for a link; "" when it cannot be made relative.
func traceHref(dir, trace string) string {
	if trace == "" {
		return ""
	}
	absDir, err1 := filepath.Abs(dir)
	absTrace, err2 := filepath.Abs(trace)
	if err1 != nil || err2 != nil {
		return ""
	}
	rel, err := filepath.Rel(absDir, absTrace)
	if err != nil {
		return ""
	}
	return filepath.ToSlash(rel)
}

// faultsCell is a merged faults_explored as the report shows it.
func faultsCell(n *int) string {
	switch {
	case n == nil:
		return "-"
	case *n < 0:
		return "none"
	}
	return fmt.Sprint(*n)
}

// renderReport renders the HTML report of rs for a file in dir.
func renderReport(dir string, inputs []string, rs []*merged, status int, now time.Time) ([]byte, error) {
	d := reportData{Generated: now.UTC().Format(time.RFC3339), Inputs: inputs, Total: len(rs), Status: status, StatusMsg: statusMeaning(status)}
	counts := map[string]int{}
	for _, m := range rs {
		counts[m.Verdict]++
		d.Schedules += m.Schedules
		d.States += m.States
		d.Rows = append(d.Rows, reportRow{
			Scenario: m.Scenario, Verdict: m.Verdict, Property: m.Property,
			Shards:    fmt.Sprintf("%d/%d", m.ShardsSeen, m.Shards),
			Schedules: m.Schedules, States: m.States, FaultsExplored: faultsCell(m.FaultsExplored),
			Time:  (time.Duration(m.ElapsedMS) * time.Millisecond).String(),
			Trace: m.Trace, TraceHref: traceHref(dir, m.Trace), Error: m.Error,
		})
	}
	for _, v := range []string{VerdictViolation, VerdictError, VerdictInconclusive, VerdictVerified} {
		if counts[v] > 0 {
			d.Counts = append(d.Counts, verdictCount{v, counts[v]})
		}
	}
	var buf bytes.Buffer
	if err := reportTemplate.Execute(&buf, d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeReport writes the HTML report to path atomically: a temporary file
// in the same directory, renamed over path once complete, so a reader never
// sees a half-written report.
func writeReport(path string, inputs []string, rs []*merged, status int) error {
	dir := filepath.Dir(path)
	page, err := renderReport(dir, inputs, rs, status, time.Now())
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(page)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
