package traces

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
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

func TestViewerInBrowser(t *testing.T) {
	bin := findChromium()
	if bin == "" {
		if os.Getenv("OPCHECK_REQUIRE_BROWSER") != "" {
			t.Fatal("OPCHECK_REQUIRE_BROWSER is set (CI sets it) but no chromium binary was found at /usr/bin/chromium or on PATH; .ci/run installs Debian's chromium")
		}
		t.Skip("no chromium binary at /usr/bin/chromium or on PATH; install Debian's chromium (apt-get install chromium) to run the viewer's browser test")
	}
	tr, h := sampleTrace(t)
	dir := t.TempDir()
	pagePath := filepath.Join(dir, "bug.html")
	if err := WriteHTMLFile(pagePath, tr, h, ViewOptions{LinearizabilityHref: "bug.linearizability.html"}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
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
	if err := chromedp.Do(bctx); err != nil { // start the browser and open the tab
		t.Fatalf("starting %s: %v", bin, err)
	}
	problems := browserProblems{dismiss: func() {
		chromedp.Call(bctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
	}}
	if err := chromedp.Listen(bctx, problems.listen); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx,
		chromedp.EmulateViewport(1500, 950),
		chromedp.Navigate("file://"+pagePath),
		chromedp.WaitVisible(chromedp.CSS("#timeline")),
	); err != nil {
		t.Fatal(err)
	}
	eval := func(js string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("evaluating %s: %v", js, err)
		}
		return s
	}

	lanes := eval(`Array.from(document.querySelectorAll("#timeline th.lane-head")).map(function (th) { return th.textContent; }).join(",")`)
	if lanes != "user,controller/zk,apiserver-1,apiserver-2,fault,clock" {
		t.Errorf("lanes shown: %q", lanes)
	}
	top := eval(`document.getElementById("violation").textContent`)
	for _, want := range []string{"NoDeleteOfLive(ConfigMap)", "a controller never deletes a ConfigMap", "it decided from a stale read at step 10"} {
		if !strings.Contains(top, want) {
			t.Errorf("violation header %q lacks %q", top, want)
		}
	}
	stale := eval(`Array.from(document.querySelectorAll(".ev.stale")).map(function (e) { return e.textContent; }).join("\n")`)
	if !strings.Contains(stale, "stale read") || !strings.Contains(stale, "step 5: modified ConfigMap default/zk at rev 4 by controller/zk") {
		t.Errorf("stale reads shown as %q", stale)
	}
	if marks := eval(`Array.from(document.querySelectorAll(".mark")).map(function (e) { return e.textContent; }).join(",")`); marks != "✖ crashed,↻ restarted" {
		t.Errorf("crash and restart marks: %q", marks)
	}
	if hidden := eval(`String(document.getElementById("diff-panel").hidden)`); hidden != "true" {
		t.Errorf("the diff panel is open before any click")
	}

	// Open the first object's diff: its last version is the deletion.
	if err := chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS("button.obj-link")),
		chromedp.WaitVisible(chromedp.CSS("#diff")),
	); err != nil {
		t.Fatal(err)
	}
	if title := eval(`document.querySelector("#diff-panel h3").textContent`); title != "ConfigMap default/zk" {
		t.Errorf("diff panel shows %q", title)
	}
	// Then go to version 2: the update of members from 1 to 3.
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#versions button.ver:nth-child(2)"))); err != nil {
		t.Fatal(err)
	}
	added := eval(`Array.from(document.querySelectorAll("#diff .d-add")).map(function (e) { return e.textContent; }).join("\n")`)
	removed := eval(`Array.from(document.querySelectorAll("#diff .d-del")).map(function (e) { return e.textContent; }).join("\n")`)
	if !strings.Contains(added, `"members": "3"`) || !strings.Contains(removed, `"members": "1"`) {
		t.Errorf("diff v1 -> v2: added %q, removed %q", added, removed)
	}
	if vis := eval(`(function () { var r = document.getElementById("diff").getBoundingClientRect(); return r.width > 0 && r.height > 0 ? "visible" : "hidden"; })()`); vis != "visible" {
		t.Errorf("the diff is %s", vis)
	}

	// The hostile object name renders as text, and made no element.
	objs := eval(`Array.from(document.querySelectorAll("button.obj-link")).map(function (b) { return b.textContent; }).join("\n")`)
	if !strings.Contains(objs, "ConfigMap default/"+xssName) {
		t.Errorf("the object named %q is not shown as text: %q", xssName, objs)
	}
	if n := eval(`document.querySelectorAll("img, b").length + " " + document.querySelectorAll("script").length`); n != "0 2" {
		t.Errorf("trace data became elements: %s img/b and script elements (want 0 2)", n)
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS("button.obj-link:nth-of-type(2)"))); err != nil {
		t.Fatal(err)
	}

	// Back to the interesting object for the screenshot.
	if err := chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS("button.obj-link")),
		chromedp.Click(chromedp.CSS("#versions button.ver:nth-child(2)")),
	); err != nil {
		t.Fatal(err)
	}
	eval(`document.getElementById("step-6").scrollIntoView({block: "start"}); window.scrollBy(0, -260); "scrolled"`)
	shot, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
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
		if err := writeFileAtomic(filepath.Join(out, "viewer.png"), func(w io.Writer) error { _, err := w.Write(shot); return err }); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot written to %s", filepath.Join(out, "viewer.png"))
	}

	// Give late events (a deferred exception, a dialog) a moment to arrive.
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[string](`"settled"`)); err != nil {
		t.Fatal(err)
	}
	for _, p := range problems.get() {
		t.Errorf("in the browser: %s", p)
	}
}
