package traces

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets"
)

// findChromium returns Debian's chromium binary, or "" when there is none.
func findChromium() string {
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	return ""
}

// browserProblems collects what the page must never do: log an error, throw,
// or open a dialog.
type browserProblems struct {
	mu       sync.Mutex
	problems []string
	// dismiss closes a dialog, so that the page does not stay blocked.
	dismiss func()
}

func (b *browserProblems) listen(ev any) {
	var p string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if string(ev.Type) == "error" {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			p = "console.error: " + strings.Join(args, " ")
		}
	case *runtime.EventExceptionThrown:
		p = "exception: " + (&chromedp.ExceptionError{ExceptionDetails: ev.ExceptionDetails}).Error()
	case *page.EventJavascriptDialogOpening:
		p = fmt.Sprintf("a %s dialog opened: %q (injected markup ran)", ev.Type, ev.Message)
		if b.dismiss != nil {
			go b.dismiss() // a listener must not run commands itself
		}
	}
	if p != "" {
		b.mu.Lock()
		b.problems = append(b.problems, p)
		b.mu.Unlock()
	}
}

func (b *browserProblems) get() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

// viewerTab is one browser tab showing a viewer page.
type viewerTab struct {
	t        *testing.T
	ctx      context.Context
	problems *browserProblems
}

// openViewer opens file path in a new tab of the browser bctx, sized
// 1500x950, and waits for the timeline. At the end of the test it fails on
// any console error, exception or dialog the page produced.
func openViewer(t *testing.T, bctx context.Context, path string) *viewerTab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // open the tab
		t.Fatalf("opening a tab: %v", err)
	}
	problems := &browserProblems{dismiss: func() {
		chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
	}}
	if err := chromedp.Listen(ctx, problems.listen); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1500, 950),
		chromedp.Navigate("file://"+path),
		chromedp.WaitVisible(chromedp.CSS("#timeline")),
	); err != nil {
		t.Fatal(err)
	}
	vt := &viewerTab{t: t, ctx: ctx, problems: problems}
	t.Cleanup(func() {
		// Give late events (a deferred exception, a dialog) a moment to
		// arrive: one more round trip to the page.
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`"settled"`)); err != nil {
			t.Errorf("the page stopped answering: %v", err)
		}
		for _, p := range problems.get() {
			t.Errorf("in the browser: %s", p)
		}
	})
	return vt
}

// eval evaluates a JavaScript expression that yields a string.
func (vt *viewerTab) eval(js string) string {
	vt.t.Helper()
	s, err := chromedp.Run(vt.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		vt.t.Fatalf("evaluating %s: %v", js, err)
	}
	return s
}

// do runs browser actions. A click waits for its element to be visible;
// ten seconds bound the wait, so that a missing or hidden element fails the
// test at once rather than at the test's deadline.
func (vt *viewerTab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	vt.t.Helper()
	ctx, cancel := context.WithTimeout(vt.ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		vt.t.Fatalf("%s: %v", what, err)
	}
}

// click clicks the element matching a CSS selector.
func (vt *viewerTab) click(selector string) {
	vt.t.Helper()
	vt.do("clicking "+selector, chromedp.Click(chromedp.CSS(selector)))
}

// texts is the textContent of every element matching a CSS selector, one a
// line.
func (vt *viewerTab) texts(selector string) string {
	vt.t.Helper()
	return vt.eval(`Array.from(document.querySelectorAll(` + strconv.Quote(selector) + `)).map(function (e) { return e.textContent; }).join("\n")`)
}

// unobscured reports whether the element matching selector is on screen
// and on top at its centre and near its top-left corner: not scrolled away,
// not hidden, not covered by the pinned violation or the lane header. It
// returns "ok" or what is wrong.
func (vt *viewerTab) unobscured(selector string) string {
	vt.t.Helper()
	return vt.eval(`(function () {
  var e = document.querySelector(` + strconv.Quote(selector) + `);
  if (!e) { return "no element"; }
  var r = e.getBoundingClientRect();
  if (r.width <= 0 || r.height <= 0) { return "not rendered (" + r.width + "x" + r.height + ")"; }
  var pts = [[r.left + r.width / 2, r.top + Math.min(r.height / 2, 40)], [r.left + 4, r.top + 4]];
  for (var i = 0; i < pts.length; i++) {
    var x = pts[i][0], y = pts[i][1];
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) { return "off screen at (" + Math.round(x) + "," + Math.round(y) + ") in " + innerWidth + "x" + innerHeight; }
    var hit = document.elementFromPoint(x, y);
    if (!hit || (hit !== e && !e.contains(hit))) {
      return "covered at (" + Math.round(x) + "," + Math.round(y) + ") by " + (hit ? hit.tagName + (hit.id ? "#" + hit.id : "") + (hit.className ? "." + hit.className : "") + " " + JSON.stringify((hit.textContent || "").slice(0, 40)) : "nothing");
    }
  }
  return "ok";
})()`)
}

// screenshot captures the viewport into t.TempDir(), and into
// $OPCHECK_SCREENSHOT_DIR when set (a relative path is from the repository
// root).
func (vt *viewerTab) screenshot() {
	t := vt.t
	t.Helper()
	shot, err := chromedp.Run(vt.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(shot, []byte("\x89PNG")) {
		t.Fatalf("screenshot is not a PNG (%d bytes)", len(shot))
	}
	if err := os.WriteFile(filepath.Join(t.TempDir(), "viewer.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("OPCHECK_SCREENSHOT_DIR"); out != "" {
		if !filepath.IsAbs(out) {
			// go test runs in traces/; the documented command names
			// docs/img from the repository root.
			out = filepath.Join("..", out)
		}
		if err := writeFileAtomic(filepath.Join(out, "viewer.png"), func(w io.Writer) error { _, err := w.Write(shot); return err }); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot written to %s", filepath.Join(out, "viewer.png"))
	}
}

func TestViewerInBrowser(t *testing.T) {
	bin := findChromium()
	if bin == "" {
		if os.Getenv("OPCHECK_REQUIRE_BROWSER") != "" {
			t.Fatal("OPCHECK_REQUIRE_BROWSER is set (CI sets it) but no chromium binary was found at /usr/bin/chromium or on PATH; .ci/run installs Debian's chromium")
		}
		t.Skip("no chromium binary at /usr/bin/chromium or on PATH; install Debian's chromium (apt-get install chromium) to run the viewer's browser test")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
	)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil { // start the browser
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Run("synthetic", func(t *testing.T) { testSyntheticPage(t, bctx, dir) })
	t.Run("zookeeper", func(t *testing.T) { testZookeeperPage(t, bctx, dir) })
}

// testSyntheticPage checks the small hand-made trace of helpers_test.go,
// with its hostile object name.
func testSyntheticPage(t *testing.T, bctx context.Context, dir string) {
	tr, h := sampleTrace(t)
	pagePath := filepath.Join(dir, "sample.html")
	if err := WriteHTMLFile(pagePath, tr, h, ViewOptions{LinearizabilityHref: "sample.linearizability.html"}); err != nil {
		t.Fatal(err)
	}
	vt := openViewer(t, bctx, pagePath)

	if lanes := vt.texts("#timeline th.lane-head"); lanes != "user\ncontroller/zk\napiserver-1\napiserver-2\nfault\nclock" {
		t.Errorf("lanes shown: %q", lanes)
	}
	top := vt.eval(`document.getElementById("violation").textContent`)
	for _, want := range []string{"NoDeleteOfLive(ConfigMap)", "a controller never deletes a ConfigMap", "it decided from a stale read at step 10"} {
		if !strings.Contains(top, want) {
			t.Errorf("violation header %q lacks %q", top, want)
		}
	}
	stale := vt.texts(".ev.stale")
	if !strings.Contains(stale, "stale read") || !strings.Contains(stale, "step 5: modified ConfigMap default/zk at rev 4 by controller/zk") {
		t.Errorf("stale reads shown as %q", stale)
	}
	if marks := vt.texts(".mark"); marks != "✖ crashed\n↻ restarted" {
		t.Errorf("crash and restart marks: %q", marks)
	}
	if hidden := vt.eval(`String(document.getElementById("diff-panel").hidden)`); hidden != "true" {
		t.Errorf("the diff panel is open before any click")
	}

	// Open the first object's diff: its last version is the deletion.
	vt.click("button.obj-link")
	vt.do("waiting for the diff", chromedp.WaitVisible(chromedp.CSS("#diff")))
	if title := vt.eval(`document.querySelector("#diff-panel h3").textContent`); title != "ConfigMap default/zk" {
		t.Errorf("diff panel shows %q", title)
	}
	// Then go to version 2: the update of members from 1 to 3.
	vt.click("#versions button.ver:nth-child(2)")
	added, removed := vt.texts("#diff .d-add"), vt.texts("#diff .d-del")
	if !strings.Contains(added, `"members": "3"`) || !strings.Contains(removed, `"members": "1"`) {
		t.Errorf("diff v1 -> v2: added %q, removed %q", added, removed)
	}
	if vis := vt.unobscured("#diff"); vis != "ok" {
		t.Errorf("the diff is not visible: %s", vis)
	}

	// The hostile object name renders as text, and made no element.
	if objs := vt.texts("button.obj-link"); !strings.Contains(objs, "ConfigMap default/"+xssName) {
		t.Errorf("the object named %q is not shown as text: %q", xssName, objs)
	}
	if n := vt.eval(`document.querySelectorAll("img, b").length + " " + document.querySelectorAll("script").length`); n != "0 2" {
		t.Errorf("trace data became elements: %s img/b and script elements (want 0 2)", n)
	}
	// Its diff (data holding a script tag) is text too.
	vt.click("button.obj-link:nth-of-type(2)")
	if d := vt.texts("#diff .d-add"); !strings.Contains(d, "<script>alert(2)</script>") {
		t.Errorf("the hostile object's diff: %q", d)
	}
	if n := vt.eval(`document.querySelectorAll("img, b").length + " " + document.querySelectorAll("script").length`); n != "0 2" {
		t.Errorf("the hostile object's diff became elements: %s img/b and script elements (want 0 2)", n)
	}
}

// zookeeperPage replays testdata/zookeeper_buggy.trace, as explore view
// does, and writes its viewer page with the replay's history.
func zookeeperPage(t *testing.T, path string) *Trace {
	t.Helper()
	tr, err := ReadFile(filepath.Join("testdata", "zookeeper_buggy.trace"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := targets.Lookup(tr.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	// (simulator.Run with the choices, as explore.Replay does: package
	// explore imports traces, so its test cannot import explore.)
	res, err := simulator.Run(sc, &model.Sequence{Choices: tr.Choices}, simulator.RunOptions{Faults: &tr.Faults})
	if err != nil {
		t.Fatalf("replaying %s: %v", tr.Scenario, err)
	}
	got := FromRun(sc.Name, tr.Faults, res.Choices, res.History, nil)
	if k, w, g, same := Diff(tr.Events, got.Events); !same {
		t.Fatalf("the replay of testdata/zookeeper_buggy.trace diverged at event %d:\nwant %s\ngot  %s\n(TestFixturesReproduce says more)", k+1, w, g)
	}
	if tr.Violation == nil || tr.Violation.Property != "NoDeleteOfLive(member PVC)" || tr.Violation.Step != len(tr.Events) {
		t.Fatalf("testdata/zookeeper_buggy.trace records %+v; this test expects NoDeleteOfLive(member PVC) at its last step", tr.Violation)
	}
	if err := WriteHTMLFile(path, tr, res.History, ViewOptions{LinearizabilityHref: "zookeeper_buggy.lin.html"}); err != nil {
		t.Fatal(err)
	}
	return tr
}

// zookeeperFacts are the numbers of the zookeeper seed-bug fixture that its
// page must show, read from the fixture's own event lines (not written
// into the test) so that a regenerated fixture is checked as strictly as
// the one the test was written against.
type zookeeperFacts struct {
	stale     EventLine // the stale Get of ZookeeperCluster default/zk
	storeRev  int64     // the store's revision when the stale read was served
	missed    []string  // the writes to default/zk the stale read did not see
	userScale int       // the step of the user's write among them (the scale back)
	crash     int       // the step of the controller's crash
	deleteRev int64     // the revision of the violating PVC delete
	staleAt   []string  // every stale read's step
}

func readZookeeperFacts(t *testing.T, tr *Trace) zookeeperFacts {
	t.Helper()
	var f zookeeperFacts
	var lines []EventLine
	for i, l := range tr.Events {
		el, err := ParseEventLine(l)
		if err != nil {
			t.Fatalf("testdata/zookeeper_buggy.trace event %d: %v", i+1, err)
		}
		lines = append(lines, el)
		if el.Op == string(model.OpCrash) {
			f.crash = el.Step
		}
		if el.Stale {
			f.staleAt = append(f.staleAt, strconv.Itoa(el.Step))
			if el.Op == string(model.OpGet) && el.Kind == "ZookeeperCluster" && el.Key == "default/zk" && strings.HasPrefix(el.Actor, "controller/") {
				f.stale = el
			}
		}
		if el.Step == tr.Violation.Step {
			f.deleteRev = int64(el.Rev)
		}
	}
	if f.stale.Step == 0 {
		t.Fatal("testdata/zookeeper_buggy.trace has no stale Get of ZookeeperCluster default/zk by the controller: the seed bug's page has nothing to show")
	}
	// The store's revision at the read is the newest committed change
	// before it; the missed writes are those to default/zk after the
	// serving cache's revision.
	for _, el := range lines {
		if el.Step >= f.stale.Step || el.Change == "" || el.Result != "rv" {
			continue
		}
		f.storeRev = max(f.storeRev, int64(el.Rev))
		if el.Kind == "ZookeeperCluster" && el.Key == "default/zk" && el.Rev > f.stale.CacheRev {
			f.missed = append(f.missed, fmt.Sprintf("step %d: %s ZookeeperCluster default/zk at rev %d by %s", el.Step, el.Change, el.Rev, el.Actor))
			if el.Actor == "user" {
				f.userScale = el.Step
			}
		}
	}
	if len(f.missed) == 0 || f.userScale == 0 {
		t.Fatalf("testdata/zookeeper_buggy.trace: the stale read at step %d missed %v; want at least the user's scale back among the writes it missed", f.stale.Step, f.missed)
	}
	return f
}

// testZookeeperPage checks the page of the zookeeper seed bug: the real
// lanes, the violation pinned above the timeline, the stale read it came
// from with the writes it missed, and the objects' diffs.
func testZookeeperPage(t *testing.T, bctx context.Context, dir string) {
	pagePath := filepath.Join(dir, "zookeeper_buggy.html")
	tr := zookeeperPage(t, pagePath)
	v := tr.Violation
	facts := readZookeeperFacts(t, tr)
	staleStep, crashStep, staleSteps := facts.stale.Step, facts.crash, facts.staleAt
	cacheRev := strconv.FormatInt(int64(facts.stale.CacheRev), 10)
	server := "apiserver-" + strconv.Itoa(facts.stale.Server)
	if len(v.Related) == 0 || v.Related[len(v.Related)-1] != staleStep {
		t.Fatalf("testdata/zookeeper_buggy.trace: want the stale Get of ZookeeperCluster default/zk from apiserver-2 as the last related step, got stale read at step %d, related %v", staleStep, v.Related)
	}
	if crashStep == 0 || crashStep > staleStep {
		t.Fatalf("testdata/zookeeper_buggy.trace: want the controller's crash before the stale read at step %d, got a crash at step %d", staleStep, crashStep)
	}
	vt := openViewer(t, bctx, pagePath)
	row := func(step int) string { return "#step-" + strconv.Itoa(step) }

	// One lane per actor and per apiserver, grouped.
	if lanes := vt.texts("#timeline th.lane-head"); lanes != strings.Join([]string{
		"user", "controller/zookeeper-operator", "apiserver-1", "apiserver-2",
		"kubelet", "pvc-protection", "statefulset-controller", "fault", "clock",
	}, "\n") {
		t.Errorf("lanes shown: %q", lanes)
	}
	// At 1500 pixels, every lane fits beside the objects pane.
	if fit := vt.eval(`(function () { var w = document.getElementById("timeline-wrap"); return w.scrollWidth <= w.clientWidth ? "fits" : "table " + w.scrollWidth + "px wide in a " + w.clientWidth + "px pane; lanes " + Array.from(document.querySelectorAll("#timeline thead th")).map(function (th) { return th.textContent + "=" + th.offsetWidth; }).join(" "); })()`); fit != "fits" {
		t.Errorf("the timeline needs a horizontal scroll at 1500 pixels: %s", fit)
	}
	for _, lane := range []string{"user", "apiserver-2", "statefulset-controller", "fault"} {
		if vis := vt.unobscured(`#timeline th.lane-head[data-lane="` + lane + `"]`); vis != "ok" {
			t.Errorf("the %s lane's header is not visible: %s", lane, vis)
		}
	}
	if n := vt.eval(`String(document.querySelectorAll("#timeline tbody tr").length)`); n != strconv.Itoa(len(tr.Events)) {
		t.Errorf("%s rows for %d events", n, len(tr.Events))
	}
	if marks := vt.texts(".mark"); marks != "✖ crashed\n↻ restarted" {
		t.Errorf("crash and restart marks: %q", marks)
	}

	// The violation, with its whole explanation, pinned at the top.
	top := vt.eval(`document.getElementById("violation").textContent`)
	for _, want := range append([]string{v.Property, v.Statement, "at step #" + strconv.Itoa(v.Step)}, v.Explanation...) {
		if !strings.Contains(top, want) {
			t.Errorf("violation header %q lacks %q", top, want)
		}
	}
	if len(v.Explanation) < 3 {
		t.Errorf("the fixture's explanation has %d lines, want 3", len(v.Explanation))
	}
	if got := vt.eval(`document.querySelector("#timeline tr.violating") ? document.querySelector("#timeline tr.violating").id : "none"`); got != row(v.Step)[1:] {
		t.Errorf("the violating row is %s, want %s", got, row(v.Step)[1:])
	}

	// The stale read: highlighted, where it was served, and what it missed.
	if got := vt.eval(`Array.from(document.querySelectorAll("#timeline tr")).filter(function (r) { return r.querySelector(".ev.stale"); }).map(function (r) { return r.id.replace("step-", ""); }).join(",")`); got != strings.Join(staleSteps, ",") {
		t.Errorf("stale reads highlighted at steps %s, the trace has them at %s", got, strings.Join(staleSteps, ","))
	}
	staleBox := row(staleStep) + " .ev.stale"
	box := vt.texts(staleBox)
	for _, want := range append([]string{
		"Get", "ZookeeperCluster default/zk", "→ rv=" + strconv.FormatInt(int64(facts.stale.Rev), 10),
		server + ", cache at rev " + cacheRev + ", store at rev " + strconv.FormatInt(facts.storeRev, 10),
		"stale read: the cache had not seen",
	}, facts.missed...) {
		if !strings.Contains(box, want) {
			t.Errorf("the stale read at step %d shows %q, lacking %q", staleStep, box, want)
		}
	}
	if bg := vt.eval(`getComputedStyle(document.querySelector(` + strconv.Quote(staleBox) + `)).backgroundColor`); bg != "rgb(255, 241, 194)" {
		t.Errorf("the stale read's background is %s, not the stale highlight", bg)
	}
	if served := vt.texts(row(staleStep) + " .served.stale"); served != "served Get default/zk @"+cacheRev+" (stale)" {
		t.Errorf("%s's column at step %d shows %q", server, staleStep, served)
	}
	if cls := vt.eval(`document.querySelector(` + strconv.Quote(row(staleStep)) + `).className`); !strings.Contains(cls, "related") {
		t.Errorf("the stale read's row is not marked related: class %q", cls)
	}

	// Jumping to a step from the pinned violation brings its row into view,
	// below the banner and the lane header, which both stay readable.
	jumpTo := func(step int) {
		t.Helper()
		vt.click(`#violation button.steplink[data-step="` + strconv.Itoa(step) + `"]`)
		for _, sel := range []string{row(step) + " .ev", "#violation .property", `#timeline th.lane-head[data-lane="` + server + `"]`, `#timeline th.lane-head[data-lane="controller/zookeeper-operator"]`} {
			if vis := vt.unobscured(sel); vis != "ok" {
				t.Errorf("after jumping to step %d, %s is not visible: %s", step, sel, vis)
			}
		}
	}
	jumpTo(v.Step)
	jumpTo(staleStep)
	if vis := vt.unobscured(staleBox + " .missed"); vis != "ok" {
		t.Errorf("after jumping to the stale read, the writes it missed are not visible: %s", vis)
	}

	// An object version from the timeline: the PVC the controller deleted,
	// at the delete (which sets deletionTimestamp).
	vt.click(row(v.Step) + " button.obj-ver")
	vt.do("waiting for the diff", chromedp.WaitVisible(chromedp.CSS("#diff")))
	if title := vt.eval(`document.querySelector("#diff-panel h3").textContent`); title != "PersistentVolumeClaim default/data-zk-1" {
		t.Errorf("the delete's version button opened %q", title)
	}
	deleteRev := strconv.FormatInt(facts.deleteRev, 10)
	if note := vt.texts("#diff-panel > .muted"); !strings.Contains(note, "modified at rev "+deleteRev+" by controller/zookeeper-operator (step "+strconv.Itoa(v.Step)+")") {
		t.Errorf("the delete's version is described as %q", note)
	}
	if added := vt.texts("#diff .d-add"); !strings.Contains(added, `"deletionTimestamp"`) || !strings.Contains(added, `"resourceVersion": "`+deleteRev+`"`) {
		t.Errorf("the delete's diff adds %q; want deletionTimestamp and resourceVersion %s", added, deleteRev)
	}
	if vis := vt.unobscured("#diff .d-add"); vis != "ok" {
		t.Errorf("the PVC's diff is not visible: %s", vis)
	}

	// An object from the list: the ZookeeperCluster, at the user's scale
	// back to 2 replicas, the write the stale read missed.
	vt.click(`#objects button.obj-link[data-object="ZookeeperCluster default/zk"]`)
	vt.click(`#versions button.ver[data-step="` + strconv.Itoa(facts.userScale) + `"]`)
	if title := vt.eval(`document.querySelector("#diff-panel h3").textContent`); title != "ZookeeperCluster default/zk" {
		t.Errorf("the object list opened %q", title)
	}
	added, removed := vt.texts("#diff .d-add"), vt.texts("#diff .d-del")
	if !strings.Contains(added, `"replicas": 2`) || !strings.Contains(removed, `"replicas": 1`) {
		t.Errorf("ZookeeperCluster diff at step %d: added %q, removed %q; want replicas 1 -> 2", facts.userScale, added, removed)
	}
	if vis := vt.unobscured("#diff .d-add"); vis != "ok" {
		t.Errorf("the ZookeeperCluster's diff is not visible: %s", vis)
	}

	// The screenshot of docs/traces.md: the stale read and the delete, the
	// violation above, the PVC's diff beside.
	// A taller window, to show the restart to apiserver-2 before the stale
	// read too.
	vt.do("resizing", chromedp.EmulateViewport(1500, 1250))
	vt.click(row(v.Step) + " button.obj-ver")
	jumpTo(staleStep)
	// Show the steps from the crash to the delete, or as many as fit.
	vt.eval(`(function () {
  var wrap = document.getElementById("timeline-wrap");
  var head = document.querySelector("#timeline thead").getBoundingClientRect();
  var r = document.getElementById("step-` + strconv.Itoa(crashStep) + `").getBoundingClientRect();
  wrap.scrollTop += r.top - head.bottom;
  // No half-finished flash from the jumps in the picture.
  document.querySelectorAll("#timeline tr.flash").forEach(function (tr) { tr.classList.remove("flash"); });
  return "scrolled";
})()`)
	for _, sel := range []string{row(crashStep+1) + " .mark.restart", staleBox, row(v.Step) + " .ev", "#diff .d-add"} {
		if vis := vt.unobscured(sel); vis != "ok" {
			t.Errorf("in the screenshot, %s is not visible: %s", sel, vis)
		}
	}
	vt.screenshot()

	// The restart's detail (which informers listed from the paused cache)
	// is clipped; a click shows all of it.
	restartDetail := row(crashStep+1) + " .ev .detail"
	clipped := `(function () { var d = document.querySelector(` + strconv.Quote(restartDetail) + `); return d.scrollHeight > d.clientHeight + 1 ? "clipped" : "whole"; })()`
	if got := vt.eval(clipped); got != "clipped" {
		t.Errorf("the restart's long detail is %s before a click, want clipped", got)
	}
	vt.click(restartDetail)
	if got := vt.eval(clipped); got != "whole" {
		t.Errorf("the restart's detail is %s after a click, want whole", got)
	}
	// The restarted controller listed from the paused cache that later
	// served the stale read, so at that cache's revision.
	if d := vt.texts(restartDetail); !strings.Contains(d, "ZookeeperCluster listed at rev "+cacheRev+" (paused cache)") {
		t.Errorf("the restart's detail: %q", d)
	}
}
