package explore

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/traces"
)

const viewUsage = `usage: explore view [-o OUT.html] TRACE

Replays the trace to get the full history (every object's versions) and
writes the HTML viewer to OUT.html (default: TRACE with .trace replaced by
.html), plus porcupine's linearizability view to OUT.lin.html, linked from
the first page. Both pages are self-contained: open them in a browser.
Exit status: 0 written, 2 the trace cannot be read or its scenario is
unknown, or a page cannot be written.

`

// view is `explore view [-o OUT.html] TRACE`.
func (c *cli) view(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explore view", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the viewer page to write (default: TRACE with .trace replaced by .html)")
	fs.Usage = func() {
		fmt.Fprint(stderr, viewUsage)
		fs.PrintDefaults()
	}
	path, code, ok := verbFlags(fs, args, stderr)
	if !ok {
		return code
	}
	if *out == "" {
		*out = sibling(path, ".trace", ".html")
	}
	lin := sibling(*out, ".html", ".lin.html")
	t, sc, ok := c.loadTrace("explore view", path, stderr)
	if !ok {
		return exitUsage
	}
	start := time.Now()
	res, got, err := rerun(sc, t.Faults, t.Choices)
	if err != nil {
		fmt.Fprintf(stderr, "explore view: %s: %v\n", path, err)
		return exitUsage
	}
	var h *model.History
	opts := traces.ViewOptions{}
	if k, wl, gl, same := traces.Diff(t.Events, got.Events); same {
		h = res.History
		if err := traces.WriteLinearizabilityFile(lin, h); err != nil {
			fmt.Fprintf(stderr, "explore view: %v; pass -o with a writable path\n", err)
			return exitUsage
		}
		opts.LinearizabilityHref = filepath.Base(lin)
	} else {
		// The page still shows the trace as recorded; object versions and
		// the linearizability view need the history, which no longer
		// matches.
		fmt.Fprintf(stderr, "explore view: warning: the replay diverged at event %d: want %s got %s (the scenario or the code changed since the trace was written); the page shows the recorded events without object versions or a linearizability view\n", k+1, lineOrNone(wl), lineOrNone(gl))
		lin = ""
	}
	if err := traces.WriteHTMLFile(*out, t, h, opts); err != nil {
		fmt.Fprintf(stderr, "explore view: %v; pass -o with a writable path\n", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "wrote %s (%d events, replayed in %s)\n", *out, len(t.Events), time.Since(start).Round(time.Millisecond))
	if lin != "" {
		fmt.Fprintf(stdout, "wrote %s (linked from the page)\n", lin)
	}
	return exitOK
}
