package traces

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func viewerHTML(t *testing.T, opts ViewOptions) string {
	t.Helper()
	tr, h := sampleTrace(t)
	var b bytes.Buffer
	if err := WriteHTML(&b, tr, h, opts); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// pageData extracts the JSON document the page embeds.
func pageData(t *testing.T, page string) *viewData {
	t.Helper()
	const open = `<script type="application/json" id="trace-data">`
	i := strings.Index(page, open)
	j := strings.Index(page[i:], "</script>")
	if i < 0 || j < 0 {
		t.Fatal("no trace data in the page")
	}
	var d viewData
	if err := json.Unmarshal([]byte(page[i+len(open):i+j]), &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

func TestViewerPage(t *testing.T) {
	page := viewerHTML(t, ViewOptions{LinearizabilityHref: "bug.linearizability.html"})
	d := pageData(t, page)
	var lanes []string
	for _, l := range d.Lanes {
		lanes = append(lanes, l.Name)
	}
	if got, want := strings.Join(lanes, ","), "user,controller/zk,apiserver-1,apiserver-2,fault,clock"; got != want {
		t.Errorf("lanes %s, want %s", got, want)
	}
	if d.Violation == nil || d.Violation.Property != "NoDeleteOfLive(ConfigMap)" || d.Violation.Step != 11 {
		t.Errorf("violation %+v", d.Violation)
	}
	if !strings.Contains(page, "a controller never deletes a ConfigMap the cluster still needs") {
		t.Error("the violation statement is not in the page")
	}
	// The stale Get at step 10 missed the controller's update at step 5.
	get := d.Events[9]
	if !get.Stale || get.CacheRev != 2 || get.HeadRev != 4 || len(get.Missed) != 1 || !strings.HasPrefix(get.Missed[0], "step 5: modified ConfigMap default/zk at rev 4") {
		t.Errorf("stale read at step 10: %+v", get)
	}
	if d.Events[8].Missed == nil || d.Events[3].Stale {
		t.Errorf("stale List at step 9 should miss the update; fresh Get at step 4 is not stale")
	}
	if get.ServerLane != 3 || d.Events[0].ServerLane != 2 {
		t.Errorf("reads should be drawn in their apiserver's column: %d %d", get.ServerLane, d.Events[0].ServerLane)
	}
	crash := d.Events[6]
	if crash.Mark != "crash" || crash.MarkLane != 1 || d.Events[7].Mark != "restart" {
		t.Errorf("crash/restart marks: %+v %+v", crash, d.Events[7])
	}
	// Objects: default/zk has 3 versions (added, modified, deleted), as
	// sorted-key JSON.
	if len(d.Objects) != 2 || d.Objects[0].Key != "default/zk" || len(d.Objects[0].Versions) != 3 {
		t.Fatalf("objects %+v", d.Objects)
	}
	v2 := d.Objects[0].Versions[1].JSON
	if !strings.Contains(v2, `"members": "3"`) || strings.Index(v2, `"apiVersion"`) > strings.Index(v2, `"data"`) {
		t.Errorf("version JSON not indented with sorted keys:\n%s", v2)
	}
	if !strings.Contains(page, `href`) || d.LinearizabilityHref != "bug.linearizability.html" {
		t.Error("linearizability link missing")
	}
	// Self-contained: nothing is loaded from elsewhere.
	for _, ext := range []string{"<script src", "<link", "http://", "https://", "@import"} {
		if strings.Contains(page, ext) {
			t.Errorf("page refers to an external resource: %q", ext)
		}
	}
	// Deterministic.
	if page != viewerHTML(t, ViewOptions{LinearizabilityHref: "bug.linearizability.html"}) {
		t.Error("two renderings of the same trace differ")
	}
}

func TestViewerEscapesData(t *testing.T) {
	page := viewerHTML(t, ViewOptions{Title: "</title><script>alert(3)</script>"})
	for _, raw := range []string{"<img", "<b>", "<script>alert", "</title><script>"} {
		if strings.Contains(page, raw) {
			t.Errorf("raw %q in the page: trace data was not escaped", raw)
		}
	}
	if !strings.Contains(page, `\u003cimg src=x onerror=alert(1)\u003e`) {
		t.Error("the hostile object name is not in the page's data, escaped")
	}
	if !strings.Contains(page, "&lt;/title&gt;&lt;script&gt;") {
		t.Error("the title is not HTML-escaped")
	}
	d := pageData(t, page)
	if d.Objects[1].Key != "default/"+xssName {
		t.Errorf("object key lost in escaping: %q", d.Objects[1].Key)
	}
}

func TestViewerRefusesBadInput(t *testing.T) {
	tr, h := sampleTrace(t)
	var b bytes.Buffer
	if err := WriteHTML(&b, tr, h, ViewOptions{LinearizabilityHref: "javascript:alert(1)"}); err == nil {
		t.Error("a javascript: link was accepted")
	}
	short := *h
	short.Events = short.Events[:3]
	if err := WriteHTML(&b, tr, &short, ViewOptions{}); err == nil {
		t.Error("a history of another run was accepted")
	}
	// Without a history the page still renders, without object versions.
	b.Reset()
	if err := WriteHTML(&b, tr, nil, ViewOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := pageData(t, b.String()); d.HasHistory || len(d.Objects) != 0 || !d.Events[9].Stale || len(d.Events[9].Missed) != 1 {
		t.Errorf("trace-only page: %+v", d.Events[9])
	}
}

func TestWriteLinearizability(t *testing.T) {
	var b bytes.Buffer
	if err := WriteLinearizability(&b, sampleHistory()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "<html") || !strings.Contains(b.String(), "Crash") {
		t.Errorf("porcupine page lacks the crash annotation (%d bytes)", b.Len())
	}
}
