package kvstore_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/examples/kvstore"
	"github.com/opcheck/opcheck/traces"
)

// Step 9: the module's own command line. cmd/kvcheck is explore.Main over
// this module's scenarios, so every verb works on them: this test builds
// it, lets check find the broken variant's bug and write its trace, and
// runs the commands check and shrink print, as printed: the replay
// reproduces (exit 1), view renders the trace, shrink shrinks it and the
// shrunk trace replays.
func TestCommandLineLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/kvcheck and runs it")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	dir := t.TempDir()
	if code, out := run(t, ".", "go build -o "+filepath.Join(dir, "kvcheck")+" ./cmd/kvcheck"); code != 0 {
		t.Fatalf("go build: %s", out)
	}
	// The random strategy: its counterexample carries steps the bug does
	// not need, so shrink has something to remove (the exhaustive search's
	// first violation is already close to minimal: its ordinary steps follow
	// the default schedule).
	code, out := run(t, dir, "./kvcheck check -strategy random -out traces kvstore/broken")
	if code != 1 || !strings.Contains(out, kvstore.PropNoDelete+" violated") {
		t.Fatalf("kvcheck check kvstore/broken: exit %d, want 1 and the violation:\n%s", code, out)
	}
	replay := printed(t, out, "replay")
	if replay != "./kvcheck replay traces/kvstore_broken.trace" {
		t.Errorf("printed replay command %q", replay)
	}
	if code, rout := run(t, dir, replay); code != 1 || !strings.Contains(rout, "reproduced: "+kvstore.PropNoDelete) {
		t.Fatalf("%s: exit %d, want 1 (it reproduces):\n%s", replay, code, rout)
	}
	if code, vout := run(t, dir, "./kvcheck view traces/kvstore_broken.trace"); code != 0 {
		t.Fatalf("view: exit %d:\n%s", code, vout)
	}
	if page, err := os.ReadFile(filepath.Join(dir, "traces", "kvstore_broken.html")); err != nil || !bytes.Contains(page, []byte(kvstore.PropNoDelete)) {
		t.Fatalf("view wrote no page naming the violation: %v", err)
	}
	code, sout := run(t, dir, "./kvcheck shrink traces/kvstore_broken.trace")
	if code != 0 {
		t.Fatalf("shrink: exit %d:\n%s", code, sout)
	}
	orig, err1 := traces.ReadFile(filepath.Join(dir, "traces", "kvstore_broken.trace"))
	min, err2 := traces.ReadFile(filepath.Join(dir, "traces", "kvstore_broken.min.trace"))
	if err1 != nil || err2 != nil || min.Violation == nil || min.Violation.Property != kvstore.PropNoDelete || len(min.Events) >= len(orig.Events) {
		t.Fatalf("shrink: want a shorter trace with the same violation: %v %v\n%s", err1, err2, sout)
	}
	if code, mout := run(t, dir, printed(t, sout, "replay it")); code != 1 {
		t.Fatalf("the shrunk trace's printed replay: exit %d, want 1:\n%s", code, mout)
	}
	t.Logf("events %d -> %d, choices %d -> %d", len(orig.Events), len(min.Events), len(orig.Choices), len(min.Choices))
}

// run runs a command line with sh in dir: its exit status and output.
func run(t *testing.T, dir, line string) (int, string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	}
	t.Fatalf("%s: %v", line, err)
	return 0, ""
}

// printed returns the command of the line "PREFIX: COMMAND" of out,
// without a trailing note in parentheses.
func printed(t *testing.T, out, prefix string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*` + prefix + `: (.*?)(\s{3}\(.*\))?$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q line in:\n%s", prefix+":", out)
	}
	return m[1]
}
