package explore

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/opcheck/opcheck/targets"
	"github.com/opcheck/opcheck/traces"
)

// userModule writes, in a temporary directory outside the repository, a
// module of its own (example.com/mirror: an operator, its explore.Check
// test and an explore.Main command) that requires opcheck through a
// replace to this checkout, and returns its directory and the environment
// to build it offline with: the repository's go.sum, GOFLAGS=-mod=mod so go
// completes the requirements from the module cache, GOPROXY=off.
func userModule(t *testing.T) (string, []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a module outside the repository (about a minute)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/mirror\n\ngo 1.26.0\n\nrequire github.com/opcheck/opcheck v0.0.0\n\nreplace github.com/opcheck/opcheck => " + repo + "\n"
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum}
	for src, dst := range map[string]string{"mirror.go.txt": "mirror.go", "mirror_test.go.txt": "mirror_test.go", "main.go.txt": "cmd/mirrorcheck/main.go"} {
		b, err := os.ReadFile(filepath.Join("testdata", "usermodule", src))
		if err != nil {
			t.Fatal(err)
		}
		files[dst] = b
	}
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "OPCHECK_OUT=")
	return dir, env
}

// sh runs a command line in dir and returns its exit status and output.
func sh(t *testing.T, dir string, env []string, line string) (int, string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if strings.Contains(out.String(), "module lookup disabled by GOPROXY=off") {
		// The module builds offline from the module cache; a cache filled
		// by go build alone lacks the go.mod files of the whole graph.
		t.Fatalf("%s: the module cache lacks a module the user module's graph needs; run `go mod download` in the repository (as .ci/run does) and test again:\n%s", line, out.String())
	}
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

// recipeLine returns the command on the line "PREFIX: COMMAND" of a
// recipe, without the trailing note in parentheses.
func recipeLine(t *testing.T, out, prefix string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*` + prefix + `: (.*?)(\s{3}\(.*\))?$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q line in:\n%s", prefix+":", out)
	}
	return m[1]
}

// The acceptance test of a user's own module: its scenario test finds the
// bug and writes a trace; the printed commands replay it (exit 1), render
// it and shrink it; the module's explore.Main binary replays it too, runs
// a sharded check and merges the shards; and opcheck's own command, which
// does not know the scenario, says how to replay it from that module.
func TestUserModuleEndToEnd(t *testing.T) {
	dir, env := userModule(t)

	code, out := sh(t, dir, env, "go test -count=1 -run '^TestMirror$' .")
	if code != 1 || !strings.Contains(out, "EventuallyConverges(dst mirrors src) violated") {
		t.Fatalf("go test of the buggy mirror: exit %d, want 1 and the violation:\n%s", code, out)
	}
	t.Logf("go test of the buggy mirror:\n%s", out)
	trace := filepath.Join(dir, "testdata", "opcheck", "mirror_buggy.trace")
	tr, err := traces.ReadFile(trace)
	if err != nil {
		t.Fatalf("Check wrote no readable trace where it says: %v\n%s", err, out)
	}
	if want := "go test example.com/mirror -run '^TestMirror$'"; tr.Rebuild != want {
		t.Errorf("the trace's rebuild line is %q, want %q", tr.Rebuild, want)
	}

	replay := recipeLine(t, out, "replay")
	if want := "go test example.com/mirror -run '^TestMirror$' -v -opcheck.replay=testdata/opcheck/mirror_buggy.trace"; replay != want {
		t.Errorf("printed replay command %q, want %q", replay, want)
	}
	code, rout := sh(t, dir, env, replay)
	if code != 1 || !strings.Contains(rout, "reproduced: EventuallyConverges(dst mirrors src)") {
		t.Fatalf("the printed replay command: exit %d, want 1 (it reproduces):\n%s", code, rout)
	}

	code, vout := sh(t, dir, env, recipeLine(t, out, "view"))
	if code != 0 {
		t.Fatalf("the printed view command: exit %d:\n%s", code, vout)
	}
	if page, err := os.ReadFile(filepath.Join(dir, "testdata", "opcheck", "mirror_buggy.html")); err != nil || !bytes.Contains(page, []byte("EventuallyConverges(dst mirrors src)")) {
		t.Fatalf("view wrote no page naming the violation (err %v):\n%s", err, vout)
	}

	code, sout := sh(t, dir, env, recipeLine(t, out, "shrink"))
	if code != 0 {
		t.Fatalf("the printed shrink command: exit %d:\n%s", code, sout)
	}
	min, err := traces.ReadFile(filepath.Join(dir, "testdata", "opcheck", "mirror_buggy.min.trace"))
	if err != nil || min.Violation == nil || min.Violation.Property != tr.Violation.Property || len(min.Choices) > len(tr.Choices) || min.Rebuild != tr.Rebuild {
		t.Fatalf("shrink: %v, %+v (from %d choices to %d)\n%s", err, min, len(tr.Choices), len(min.Choices), sout)
	}
	// The shrunk trace replays with the command shrink prints.
	if code, mout := sh(t, dir, env, recipeLine(t, sout, "replay it")); code != 1 {
		t.Fatalf("replaying the shrunk trace as printed: exit %d, want 1:\n%s", code, mout)
	}

	// A harness error under -opcheck.replay exits the test binary with 2
	// (go test itself would report 1), as docs/user-guide.md says.
	if code, o := sh(t, dir, env, "go test -c -o bin/mirror.test . && bin/mirror.test -test.run '^TestMirror$' -opcheck.replay=testdata/opcheck/no-such.trace"); code != 2 || !strings.Contains(o, "opcheck: error:") {
		t.Fatalf("the compiled test binary replaying a missing trace: exit %d, want 2 and the error:\n%s", code, o)
	}

	// explore.Fuzz reports as Check does: its seed corpus finds the bug,
	// writes the trace, and the printed command replays it.
	t.Setenv("OPCHECK_OUT", "")
	code, fout := sh(t, dir, env, "go test -count=1 -run '^FuzzMirror$' .")
	if code != 1 || !strings.Contains(fout, "(a fuzz input)") || !strings.Contains(fout, "fuzz input: coin rate") {
		t.Fatalf("go test of FuzzMirror: exit %d, want 1 and a fuzz recipe:\n%s", code, fout)
	}
	if fr := recipeLine(t, fout, "replay"); !strings.Contains(fr, "-run '^FuzzMirror$'") {
		t.Errorf("the fuzz recipe's replay command %q does not run FuzzMirror", fr)
	} else if code, o := sh(t, dir, env, fr); code != 1 || !strings.Contains(o, "reproduced: ") {
		t.Fatalf("the fuzz recipe's replay command: exit %d, want 1:\n%s", code, o)
	}

	// The module's own command line: every verb, exit statuses kept.
	if code, bout := sh(t, dir, env, "go build -o bin/mirrorcheck ./cmd/mirrorcheck"); code != 0 {
		t.Fatalf("go build: %s", bout)
	}
	if code, o := sh(t, dir, env, "bin/mirrorcheck replay testdata/opcheck/mirror_buggy.trace"); code != 1 {
		t.Fatalf("mirrorcheck replay: exit %d, want 1:\n%s", code, o)
	}
	if code, o := sh(t, dir, env, "bin/mirrorcheck replay testdata/opcheck/no-such.trace"); code != 2 {
		t.Fatalf("mirrorcheck replay of a missing file: exit %d, want 2:\n%s", code, o)
	}
	for i := 0; i < 2; i++ {
		shard := []string{"0/2", "1/2"}[i]
		code, o := sh(t, dir, env, "bin/mirrorcheck check -json -shard "+shard+" -out out mirror/buggy mirror/fixed > shard-"+shard[:1]+".json")
		if code > 1 {
			t.Fatalf("mirrorcheck check -shard %s: exit %d:\n%s", shard, code, o)
		}
	}
	code, mout := sh(t, dir, env, "bin/mirrorcheck merge shard-0.json shard-1.json")
	if code != 1 || !regexp.MustCompile(`mirror/buggy\s+violation\s+EventuallyConverges\(dst mirrors src\)\s+2/2`).MatchString(mout) || !regexp.MustCompile(`mirror/fixed\s+verified\s+-\s+2/2`).MatchString(mout) {
		t.Fatalf("merge of the two shards: exit %d, want 1 with mirror/buggy violated and mirror/fixed verified:\n%s", code, mout)
	}

	// The exhaustive search resumes the user's schedules from checkpoints
	// (the mirror's reconciler is built by New, and it has no external
	// system): the same search as replaying each from the start. Its
	// monitors, DstNeverGoesBack's own among them, go on from forks: no
	// event is shown to a fresh monitor again.
	var fixed [2]Result
	for i, flag := range []string{"", " -no-resume"} {
		code, o := sh(t, dir, env, "bin/mirrorcheck check -json -workers 1"+flag+" mirror/fixed")
		if code != 0 || json.Unmarshal([]byte(strings.TrimSpace(o)), &fixed[i]) != nil {
			t.Fatalf("mirrorcheck check -json%s mirror/fixed: exit %d, want 0 and one JSON line:\n%s", flag, code, o)
		}
	}
	if r, p := fixed[0], fixed[1]; r.Verdict != VerdictVerified || r.Schedules != p.Schedules || r.States != p.States || r.Steps != p.Steps || r.Resumed == 0 || p.Resumed != 0 || r.Replayed+r.Resumed != p.Replayed || r.Reconciles == 0 || r.Reconciles > p.Reconciles || r.MonitorReplayed != 0 {
		t.Fatalf("mirror/fixed resumed from checkpoints: %+v; replayed from the start: %+v", r, p)
	}

	// The user's scenario explored on one worker and on four: the same
	// verdict, the same first violation (the smallest violating schedule
	// in the exploration order) and the same trace file, byte for byte,
	// for the exhaustive search and for random sampling.
	for _, strategy := range []string{"exhaustive", "random -schedules 300"} {
		var reports [2]Result
		var traceFiles [2][]byte
		for i, workers := range []string{"1", "4"} {
			outDir := "workers-" + workers + "-" + strings.Fields(strategy)[0]
			code, o := sh(t, dir, env, "bin/mirrorcheck check -json -strategy "+strategy+" -workers "+workers+" -out "+outDir+" mirror/buggy > "+outDir+".json")
			line, err := os.ReadFile(filepath.Join(dir, outDir+".json"))
			if code != 1 || err != nil || json.Unmarshal(bytes.TrimSpace(line), &reports[i]) != nil || reports[i].Trace == "" {
				t.Fatalf("mirrorcheck check -strategy %s -workers %s mirror/buggy: exit %d, want 1, one JSON line and a trace (%v):\n%s\n%s", strategy, workers, code, err, line, o)
			}
			p := reports[i].Trace
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			traceFiles[i] = b
		}
		one, four := reports[0], reports[1]
		if one.Verdict != VerdictViolation || four.Verdict != one.Verdict || one.Property == "" || four.Property != one.Property {
			t.Fatalf("-strategy %s: one worker found %+v, four %+v: want the same violation", strategy, one, four)
		}
		// Sampling stops at the first violating schedule in index order,
		// so both ran the schedules before it and it: a trace alone does
		// not say which schedule it came from.
		if one.Strategy == StrategyRandom && four.Schedules != one.Schedules {
			t.Fatalf("-strategy %s: one worker stopped after %d schedules, four after %d: want the same first violating schedule", strategy, one.Schedules, four.Schedules)
		}
		if !bytes.Equal(traceFiles[0], traceFiles[1]) {
			t.Fatalf("-strategy %s: the traces written with one worker and with four differ:\n%s", strategy, firstDiffLine(string(traceFiles[0]), string(traceFiles[1])))
		}
	}

	// A verified search explored its whole fault budget; one a budget cuts
	// says what it explored, and how to go on.
	if r := fixed[0]; r.FaultsExplored == nil || *r.FaultsExplored < 1 || r.Cut != "" {
		t.Fatalf("mirror/fixed verified with faults_explored %v, cut %q: want the fault budget's total, no cut", r.FaultsExplored, r.Cut)
	}
	code, o := sh(t, dir, env, "bin/mirrorcheck check -workers 1 -schedules 2 mirror/fixed")
	if code != 0 || !strings.Contains(o, "mirror/fixed: inconclusive: ") || !strings.Contains(o, "the schedule budget (2) ran out among the schedules with") || !strings.Contains(o, "to go on: raise -schedules or -time") {
		t.Fatalf("mirrorcheck check -schedules 2 mirror/fixed: exit %d, want 0 and what the search explored:\n%s", code, o)
	}

	// explore.CheckWorkloads closes the same loop for a generated
	// workload: its trace records the minimal workload, the printed go
	// test commands rebuild it from the test's actions and replay, view
	// and shrink it, and a program that cannot rebuild it says where to
	// go.
	code, wout := sh(t, dir, env, "go test -count=1 -run '^TestMirrorWorkloads$' .")
	if code != 1 || !strings.Contains(wout, "generated workload violates EventuallyConverges(dst mirrors src)") {
		t.Fatalf("go test of TestMirrorWorkloads: exit %d, want 1 and the violation:\n%s", code, wout)
	}
	wtrace := filepath.Join(dir, "testdata", "opcheck", "mirror_buggy.workload.trace")
	wt, err := traces.ReadFile(wtrace)
	if err != nil || !strings.Contains(wt.Workload, `"action":"put"`) || wt.Rebuild != "go test example.com/mirror -run '^TestMirrorWorkloads$'" {
		t.Fatalf("CheckWorkloads wrote no trace with its workload and rebuild lines (%v): %+v\n%s", err, wt, wout)
	}
	if code, o := sh(t, dir, env, recipeLine(t, wout, "replay")); code != 1 || !strings.Contains(o, "reproduced: EventuallyConverges(dst mirrors src)") {
		t.Fatalf("the workload recipe's replay command: exit %d, want 1 (it reproduces):\n%s", code, o)
	}
	if code, o := sh(t, dir, env, recipeLine(t, wout, "view")); code != 0 {
		t.Fatalf("the workload recipe's view command: exit %d:\n%s", code, o)
	}
	if _, err := os.Stat(filepath.Join(dir, "testdata", "opcheck", "mirror_buggy.workload.html")); err != nil {
		t.Fatalf("view wrote no page: %v", err)
	}
	code, wsout := sh(t, dir, env, recipeLine(t, wout, "shrink"))
	if code != 0 {
		t.Fatalf("the workload recipe's shrink command: exit %d:\n%s", code, wsout)
	}
	wmin, err := traces.ReadFile(filepath.Join(dir, "testdata", "opcheck", "mirror_buggy.workload.min.trace"))
	if err != nil || wmin.Workload != wt.Workload || wmin.Violation == nil {
		t.Fatalf("the shrunk workload trace lost its workload or violation (%v): %+v", err, wmin)
	}
	if code, o := sh(t, dir, env, recipeLine(t, wsout, "replay it")); code != 1 {
		t.Fatalf("replaying the shrunk workload trace as printed: exit %d, want 1:\n%s", code, o)
	}
	// explore.Check does not run it, and says which call would.
	if code, o := sh(t, dir, env, "go test -count=1 -run '^TestMirror$' . -opcheck.replay="+wtrace); code != 1 || !strings.Contains(o, "no explore.CheckWorkloads of scenario") {
		t.Fatalf("TestMirror given the workload trace: exit %d, want 1 and what to run:\n%s", code, o)
	}
	if code, o := sh(t, dir, env, "bin/mirrorcheck replay "+wtrace); code != 2 || !strings.Contains(o, "generated workload") || !strings.Contains(o, "-run '^TestMirrorWorkloads$' -v -opcheck.replay=") {
		t.Fatalf("mirrorcheck replay of the workload trace: exit %d, want 2 and the go test command:\n%s", code, o)
	}

	// opcheck's own command does not know the scenario: exit 2, and it
	// prints the command of the module that does.
	var stdout, stderr bytes.Buffer
	if code := Run([]string{"replay", trace}, &stdout, &stderr, targets.All()...); code != 2 || !strings.Contains(stderr.String(), "go test example.com/mirror -run '^TestMirror$' -v -opcheck.replay="+trace) {
		t.Fatalf("explore replay of the module's trace: exit %d, want 2 and the module's replay command:\n%s", code, stderr.String())
	}
}
