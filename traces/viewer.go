package traces

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/url"
	"sort"
	"strings"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
)

//go:embed assets/viewer.css
var viewerCSS string

//go:embed assets/viewer.js
var viewerJS string

// ViewOptions tunes WriteHTML.
type ViewOptions struct {
	// Title is the page title; "" means "opcheck trace: SCENARIO".
	Title string
	// LinearizabilityHref, when set, is linked from the page as the
	// porcupine linearizability view of the same history (see
	// WriteLinearizability). It must be a relative reference or an http,
	// https or file URL.
	LinearizabilityHref string
}

// WriteHTML writes one self-contained HTML page showing t: one lane per
// actor and per apiserver, time flowing down by step, crash and restart
// marks, stale reads with the writes they missed, the violation pinned at
// the top, and, when h (the history of a replay of t) is given, every
// object's versions as JSON with a diff between consecutive versions. h may
// be nil; it must otherwise hold exactly t's events.
//
// The page loads nothing: its style and script are inlined, and the trace
// is embedded as a JSON document the script renders as text only.
func WriteHTML(w io.Writer, t *Trace, h *model.History, opts ViewOptions) error {
	data, err := buildView(t, h, opts)
	if err != nil {
		return fmt.Errorf("traces: view: %w", err)
	}
	blob, err := json.Marshal(data) // escapes <, > and & as \u003c etc.
	if err != nil {
		return fmt.Errorf("traces: view: %w", err)
	}
	bw := bufio.NewWriter(w)
	bw.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	bw.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n")
	bw.WriteString("<title>")
	bw.WriteString(html.EscapeString(data.Title))
	bw.WriteString("</title>\n<style>\n")
	bw.WriteString(viewerCSS)
	bw.WriteString("</style>\n</head>\n<body>\n<noscript>This trace viewer needs JavaScript; the trace file itself is plain text.</noscript>\n")
	bw.WriteString("<script type=\"application/json\" id=\"trace-data\">")
	bw.Write(blob)
	bw.WriteString("</script>\n<script>\n")
	bw.WriteString(viewerJS)
	bw.WriteString("</script>\n</body>\n</html>\n")
	return bw.Flush()
}

// WriteHTMLFile writes the page atomically to path (see WriteHTML).
func WriteHTMLFile(path string, t *Trace, h *model.History, opts ViewOptions) error {
	return writeFileAtomic(path, func(w io.Writer) error { return WriteHTML(w, t, h, opts) })
}

// WriteLinearizability writes porcupine's linearizability view of h, with
// fault and harness annotations (properties.WriteVisualization).
func WriteLinearizability(w io.Writer, h *model.History) error {
	if h == nil {
		return errors.New("traces: linearizability view: nil history")
	}
	return properties.WriteVisualization(w, h, nil, true)
}

// The page's data. Field names are the JSON the script reads.
type viewData struct {
	Title               string       `json:"title"`
	Scenario            string       `json:"scenario"`
	Opcheck             string       `json:"opcheck"`
	Faults              string       `json:"faults"`
	Choices             string       `json:"choices"`
	ChoiceCount         int          `json:"choiceCount"`
	Violation           *Violation   `json:"violation"`
	Lanes               []viewLane   `json:"lanes"`
	Events              []viewEvent  `json:"events"`
	Objects             []viewObject `json:"objects"`
	HasHistory          bool         `json:"hasHistory"`
	LinearizabilityHref string       `json:"linearizabilityHref,omitempty"`
}

type viewLane struct {
	Name  string `json:"name"`
	Group string `json:"group"` // user, controller, apiserver, builtin, external, fault, clock
}

type viewEvent struct {
	Step       int      `json:"step"`
	Time       string   `json:"time"`
	Line       string   `json:"line"`
	Lane       int      `json:"lane"`
	Actor      string   `json:"actor"`
	Op         string   `json:"op"`
	Kind       string   `json:"kind,omitempty"`
	Key        string   `json:"key,omitempty"`
	Detail     string   `json:"detail,omitempty"`
	Result     string   `json:"result"`
	Change     string   `json:"change,omitempty"`
	Server     int      `json:"server,omitempty"`
	ServerLane int      `json:"serverLane"` // -1 for none
	Read       bool     `json:"read,omitempty"`
	CacheRev   int64    `json:"cacheRev,omitempty"`
	HeadRev    int64    `json:"headRev,omitempty"`
	Stale      bool     `json:"stale,omitempty"`
	Missed     []string `json:"missed,omitempty"`
	Mark       string   `json:"mark,omitempty"` // crash or restart
	MarkLane   int      `json:"markLane"`       // -1 for none
	Object     int      `json:"object"`         // index into objects, -1 for none
	Version    int      `json:"version"`        // index into the object's versions
}

type viewObject struct {
	Kind     string        `json:"kind"`
	Key      string        `json:"key"`
	Versions []viewVersion `json:"versions"`
}

type viewVersion struct {
	Step   int    `json:"step"`
	Rev    int64  `json:"rev"`
	Change string `json:"change"`
	Actor  string `json:"actor"`
	JSON   string `json:"json"`
}

// resultText renders an event line's result for the page.
func resultText(el *EventLine) string {
	switch el.Result {
	case "rv":
		return "rv=" + el.Rev.String()
	case "err":
		return "error: " + el.Err
	case "list":
		parts := make([]string, len(el.Versions))
		for i, v := range el.Versions {
			parts[i] = v.Name + "@" + v.Rev.String()
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return el.Result
}

func buildView(t *Trace, h *model.History, opts ViewOptions) (*viewData, error) {
	if t == nil {
		return nil, errors.New("nil trace")
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if h != nil && len(h.Events) != len(t.Events) {
		return nil, fmt.Errorf("the history has %d events and the trace %d; pass the history of a replay of this trace (or none)", len(h.Events), len(t.Events))
	}
	if href := opts.LinearizabilityHref; href != "" {
		u, err := url.Parse(href)
		if err != nil || (u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file") {
			return nil, fmt.Errorf("linearizability link %q: want a relative path or an http, https or file URL", href)
		}
	}
	d := &viewData{
		Title:               opts.Title,
		Scenario:            t.Scenario,
		Opcheck:             t.OpcheckVersion,
		Faults:              t.Faults.String(),
		Choices:             model.FormatChoices(t.Choices),
		ChoiceCount:         len(t.Choices),
		Violation:           t.Violation,
		HasHistory:          h != nil,
		LinearizabilityHref: opts.LinearizabilityHref,
		Lanes:               []viewLane{},
		Events:              []viewEvent{},
		Objects:             []viewObject{},
	}
	if d.Title == "" {
		d.Title = "opcheck trace: " + t.Scenario
	}
	lines := make([]EventLine, len(t.Events))
	for i, l := range t.Events {
		el, err := ParseEventLine(l)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", i+1, err)
		}
		lines[i] = el
	}

	// Lanes: every actor, every apiserver, and every crashed or restarted
	// controller, ordered by group then name.
	laneSet := map[string]bool{}
	addLane := func(name string) { laneSet[name] = true }
	for i := range lines {
		el := &lines[i]
		addLane(laneOf(el))
		if el.Server > 0 {
			addLane(serverLane(el.Server))
		}
		if (el.Op == string(model.OpCrash) || el.Op == string(model.OpRestart)) && el.Key != "" {
			addLane(el.Key)
		}
	}
	names := make([]string, 0, len(laneSet))
	for n := range laneSet {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return laneLess(names[i], names[j]) })
	laneIdx := map[string]int{}
	for i, n := range names {
		laneIdx[n] = i
		d.Lanes = append(d.Lanes, viewLane{Name: n, Group: laneGroup(n).String()})
	}

	objIdx := map[string]int{}
	for i := range lines {
		el := &lines[i]
		ve := viewEvent{
			Step: el.Step, Time: el.Time, Line: t.Events[i], Lane: laneIdx[laneOf(el)],
			Actor: el.Actor, Op: el.Op, Kind: el.Kind, Key: el.Key, Detail: el.Detail,
			Result: resultText(el), Change: el.Change, Server: el.Server, ServerLane: -1,
			Read:     el.Op == string(model.OpGet) || el.Op == string(model.OpList),
			CacheRev: int64(el.CacheRev), Stale: el.Stale, MarkLane: -1, Object: -1,
		}
		if el.Server > 0 {
			ve.ServerLane = laneIdx[serverLane(el.Server)]
		}
		switch el.Op {
		case string(model.OpCrash):
			ve.Mark = "crash"
		case string(model.OpRestart):
			ve.Mark = "restart"
		}
		if ve.Mark != "" && el.Key != "" {
			ve.MarkLane = laneIdx[el.Key]
		}
		if el.Stale {
			ve.Missed = missed(lines[:i], el)
		}
		if h != nil {
			e := &h.Events[i]
			ve.HeadRev = int64(e.HeadRev)
			if e.Object != nil {
				js, err := objectJSON(e.Object)
				if err != nil {
					return nil, fmt.Errorf("event %d: object %s: %w", i+1, el.Key, err)
				}
				id := e.Kind + " " + e.Key()
				oi, ok := objIdx[id]
				if !ok {
					oi = len(d.Objects)
					objIdx[id] = oi
					d.Objects = append(d.Objects, viewObject{Kind: e.Kind, Key: e.Key()})
				}
				o := &d.Objects[oi]
				ve.Object, ve.Version = oi, len(o.Versions)
				o.Versions = append(o.Versions, viewVersion{Step: e.Step, Rev: int64(e.Rev), Change: e.Change.String(), Actor: string(e.Actor), JSON: js})
			}
		}
		d.Events = append(d.Events, ve)
	}
	return d, nil
}

// laneOf is the lane an event is drawn in: its actor's, or an apiserver's
// own lane for the apiserver actor.
func laneOf(el *EventLine) string {
	if el.Actor == string(model.ActorAPIServer) && el.Server > 0 {
		return serverLane(el.Server)
	}
	return el.Actor
}

func serverLane(n int) string { return string(model.APIServerActor(n)) }

// laneGroup is the group a lane is drawn in: its actor's group.
func laneGroup(name string) model.ActorGroup { return model.Actor(name).Group() }

// laneLess orders lanes by group (in the order model declares the groups),
// apiservers by number, then by name.
func laneLess(a, b string) bool {
	ga, gb := laneGroup(a), laneGroup(b)
	if ga != gb {
		return ga < gb
	}
	na, okA := model.APIServerNumber(model.Actor(a))
	nb, okB := model.APIServerNumber(model.Actor(b))
	if okA && okB && na != nb {
		return na < nb
	}
	return a < b
}

// missed lists the earlier writes a stale read did not see: writes to what
// it read (same kind, and same key for a Get, same namespace for a List)
// committed after the revision of the cache that served it.
func missed(before []EventLine, read *EventLine) []string {
	var out []string
	for i := range before {
		w := &before[i]
		if w.Change == "" || w.Result != "rv" || w.Rev <= read.CacheRev || w.Kind != read.Kind {
			continue
		}
		switch {
		case read.Op == string(model.OpList):
			// A List's key is its namespace ("" for all namespaces).
			if wns, _, _ := strings.Cut(w.Key, "/"); read.Key != "" && wns != read.Key {
				continue
			}
		case w.Key != read.Key:
			continue
		}
		out = append(out, fmt.Sprintf("step %d: %s %s %s at rev %d by %s", w.Step, w.Change, w.Kind, w.Key, w.Rev, w.Actor))
	}
	return out
}

// objectJSON renders an object as indented JSON with sorted keys.
func objectJSON(obj any) (string, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return "", err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	// No HTML escaping here: the page shows this text as text, and
	// WriteHTML escapes <, > and & when it embeds the page's data.
	var out strings.Builder
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(out.String(), "\n"), nil
}
