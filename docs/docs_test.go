// Package docs_test runs, or checks, every command that README.md and
// docs/*.md show, so that the docs cannot drift from the code: a renamed
// flag, a removed make target, a moved package or a renamed test function
// fails `go test ./docs/` (and so `make test`).
//
// Commands are the lines of fenced code blocks marked sh, bash, shell or
// console (in console blocks only the `$ ` lines), lines starting with `$ `,
// and the lines of unmarked fenced blocks that start with a known command
// word (go, make, git, kubectl, explore, ...), so an unmarked block of
// commands is not skipped. Inline `go test ...` and `make ...` spans in the
// prose are checked too.
package docs_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// root is the repository root (go test runs in docs/).
const root = ".."

// placeholders: what an ALL-CAPS word in a command (the docs' way of
// marking a placeholder, as the CLI's usage text does) stands for. Any
// other ALL-CAPS word fails the test, so the docs stay concrete.
// "@results" is replaced by a results file the test writes.
var placeholders = map[string]string{
	"TRACE":    "traces/testdata/zookeeper_buggy.trace",
	"SCENARIO": "zookeeper/buggy",
	"RESULT":   "@results",
}

// shellVars: the values of the shell variables the docs' commands use.
var shellVars = map[string]string{
	"JOB_COMPLETION_INDEX": "0",               // set by Kubernetes in each pod of an Indexed Job (docs/deploy/nightly-job.yaml)
	"SCENARIOS":            "zookeeper/fixed", // the Job's env (docs/deploy/nightly-job.yaml); one scenario keeps the test short
}

// allowed are the commands the test does not run, keyed by their first
// word(s), with the reason.
var allowed = map[string]string{
	"go build -o bin/explore ./cmd/explore":                     "builds the binary the bin/explore commands run; this test builds the same one (buildExplore)",
	"go install ./cmd/explore":                                  "installs the binary the explore commands run; this test builds the same one (buildExplore)",
	"go -C examples/kvstore build -o bin/kvcheck ./cmd/kvcheck": "builds the example module's own command line; examples/kvstore's TestCommandLineLoop builds and runs it",
	"kubectl":  "needs a cluster; docs/deploy/deploy_test.go decodes the manifests it applies (and the -f files must exist)",
	"git diff": "read-only look at the working tree after a regeneration",
}

// outputDirs are directories the docs' commands write to or read what an
// earlier command wrote; each command gets a fresh temporary copy.
// opcheck-out/ is explore check's default -out: its copy holds the
// committed fixture traces, as if explore check had just run.
var outputDirs = []string{"opcheck-out", "results", "/results"}

// commandWords start a command line in an unmarked fenced block.
var commandWords = map[string]bool{"go": true, "make": true, "git": true, "kubectl": true, "explore": true, "gofmt": true, "apt-get": true, "docker": true, "curl": true}

type command struct {
	where string // file:line
	text  string // as written, continuations joined
	words []string
	env   []string // leading VAR=value words
	out   string   // > redirection target, if any
	// comment is the trailing # comment; "exit N" in it is the exit status
	// the docs promise, which the test then demands.
	comment string
}

// docFiles are README.md and docs/*.md.
func docFiles(t *testing.T) []string {
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	return files
}

var (
	fenceRE  = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([A-Za-z0-9_+-]*)")
	inlineRE = regexp.MustCompile("`((?:go test|make) [^`]+)`")
	capsRE   = regexp.MustCompile(`^\[?([A-Z][A-Z0-9_]*)(\.\.\.)?\]?$`)
	varRE    = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)
)

// extract returns the commands of one markdown file.
func extract(t *testing.T, file string) []command {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.ToSlash(file)
	if rel, ok := strings.CutPrefix(name, root+"/"); ok {
		name = rel
	} else if !filepath.IsAbs(file) {
		name = "docs/" + name
	}
	var cmds []command
	inBlock, lang := false, ""
	var pending strings.Builder
	pendingAt := 0
	var prose strings.Builder // the text outside blocks, for inline spans
	sc := bufio.NewScanner(bytes.NewReader(data))
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Text()
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			if !inBlock {
				inBlock, lang = true, strings.ToLower(m[2])
			} else {
				inBlock = false
			}
			continue
		}
		trimmed := strings.TrimSpace(line)
		if !inBlock {
			prose.WriteString(trimmed + " ")
			if strings.HasPrefix(trimmed, "$ ") {
				cmds = append(cmds, parse(t, fmt.Sprintf("%s:%d", name, ln), strings.TrimPrefix(trimmed, "$ ")))
			}
			continue
		}
		var text string
		switch lang {
		case "sh", "bash", "shell":
			text = trimmed
		case "console", "":
			if strings.HasPrefix(trimmed, "$ ") {
				text = strings.TrimPrefix(trimmed, "$ ")
			} else if lang == "" && pending.Len() == 0 && startsCommand(trimmed) {
				text = trimmed
			} else if pending.Len() > 0 {
				text = trimmed
			}
		}
		if text == "" && pending.Len() == 0 {
			continue
		}
		if pending.Len() == 0 {
			pendingAt = ln
		}
		if cont, ok := strings.CutSuffix(text, "\\"); ok {
			pending.WriteString(cont + " ")
			continue
		}
		pending.WriteString(text)
		full := strings.TrimSpace(pending.String())
		pending.Reset()
		if full == "" || strings.HasPrefix(full, "#") {
			continue
		}
		cmds = append(cmds, parse(t, fmt.Sprintf("%s:%d", name, pendingAt), full))
	}
	if inBlock {
		t.Errorf("%s: a fenced block is not closed", name)
	}
	for _, m := range inlineRE.FindAllStringSubmatch(prose.String(), -1) {
		text := strings.Join(strings.Fields(m[1]), " ")
		cmds = append(cmds, parse(t, name+" (inline)", text))
	}
	return cmds
}

func startsCommand(line string) bool {
	for _, w := range strings.Fields(line) {
		if strings.Contains(w, "=") && !strings.HasPrefix(w, "-") {
			continue // VAR=value
		}
		return commandWords[w]
	}
	return false
}

// parse splits a command line the way sh would for the docs' simple
// commands: quotes, a trailing # comment, leading VAR=value words and one
// > redirection. Pipes, lists and substitutions are refused: keep the docs'
// commands simple enough to check.
func parse(t *testing.T, where, text string) command {
	c := command{where: where, text: text}
	var words []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	for _, r := range text {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '#' && !inWord:
			c.comment = strings.TrimSpace(text[strings.IndexRune(text, '#')+1:])
			goto done
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
done:
	if quote != 0 {
		t.Errorf("%s: unbalanced quote in %q", where, text)
	}
	if inWord {
		words = append(words, cur.String())
	}
	for len(words) > 0 && regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`).MatchString(words[0]) {
		c.env, words = append(c.env, words[0]), words[1:]
	}
	for i := 0; i < len(words); i++ {
		switch w := words[i]; {
		case w == ">" && i+1 < len(words):
			c.out = words[i+1]
			words = append(words[:i], words[i+2:]...)
			i--
		case strings.HasPrefix(w, ">") && len(w) > 1 && w != ">>":
			c.out = w[1:]
			words = append(words[:i], words[i+1:]...)
			i--
		case w == "|" || w == "&&" || w == "||" || w == ";" || w == ">>" || strings.Contains(w, "$("):
			t.Errorf("%s: %q: pipes, lists and substitutions are not checked; split it into simple commands", where, text)
		}
	}
	c.words = words
	return c
}

// TestDocCommands checks every command of the docs.
func TestDocCommands(t *testing.T) {
	var cmds []command
	for _, f := range docFiles(t) {
		cmds = append(cmds, extract(t, f)...)
	}
	kinds := map[string]int{}
	bin := buildExplore(t)
	resultsFile := writeResults(t)
	results := func() string { return resultsFile }
	for _, c := range cmds {
		if len(c.words) == 0 {
			continue
		}
		w := c.words
		switch {
		case len(w) >= 3 && w[0] == "go" && w[1] == "run" && w[2] == "./cmd/explore":
			kinds["explore"]++
			t.Run(c.where, func(t *testing.T) { runExplore(t, c, w[3:], bin, results) })
		case w[0] == "explore" || w[0] == "bin/explore":
			kinds["explore"]++
			t.Run(c.where, func(t *testing.T) { runExplore(t, c, w[1:], bin, results) })
		case w[0] == "make":
			kinds["make"]++
			t.Run(c.where, func(t *testing.T) { checkMake(t, c) })
		case len(w) >= 2 && w[0] == "go" && w[1] == "test":
			kinds["go test"]++
			t.Run(c.where, func(t *testing.T) { checkGoTest(t, c, ".", w[2:]) })
		case len(w) >= 4 && w[0] == "go" && w[1] == "-C" && w[3] == "test":
			kinds["go test"]++
			t.Run(c.where, func(t *testing.T) { checkGoTest(t, c, w[2], w[4:]) })
		default:
			kinds["allowed"]++
			t.Run(c.where, func(t *testing.T) { checkAllowed(t, c) })
		}
	}
	t.Logf("doc commands: %v", kinds)
	// The extraction itself must not rot: the docs show at least these.
	for kind, atLeast := range map[string]int{"explore": 6, "make": 2, "go test": 4, "allowed": 1} {
		if kinds[kind] < atLeast {
			t.Errorf("found %d %s commands in the docs, want at least %d: is the extraction broken?", kinds[kind], kind, atLeast)
		}
	}
}

// buildExplore builds the CLI once.
func buildExplore(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "explore")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/explore")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/explore: %v\n%s", err, out)
	}
	return bin
}

// writeResults writes the results file a RESULT placeholder stands for:
// one line of explore check -json.
func writeResults(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "shard-0.json")
	line := `{"scenario":"zookeeper/fixed","verdict":"inconclusive","schedules":20,"states":17,"elapsed_ms":311}` + "\n"
	if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tempOutputs makes this command's temporary copies of the output dirs and
// returns a function mapping a path into them ("" if it is in none).
func tempOutputs(t *testing.T) (string, func(string) string) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "opcheck-out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	fixtures, _ := filepath.Glob(filepath.Join(root, "traces", "testdata", "*.trace"))
	if len(fixtures) == 0 {
		t.Fatal("no fixture traces in traces/testdata")
	}
	for _, f := range fixtures {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mapPath := func(p string) string {
		for _, d := range outputDirs {
			if p == d || strings.HasPrefix(p, d+"/") {
				q := filepath.Join(tmp, filepath.FromSlash(strings.TrimPrefix(p, "/")))
				os.MkdirAll(filepath.Dir(q), 0o755)
				return q
			}
		}
		return ""
	}
	return tmp, mapPath
}

// substitute replaces the shell variables and the placeholders of a word;
// it fails on an unknown one.
func substitute(t *testing.T, c command, w string, results func() string) string {
	w = varRE.ReplaceAllStringFunc(w, func(v string) string {
		name := varRE.FindStringSubmatch(v)[1]
		val, ok := shellVars[name]
		if !ok {
			t.Errorf("%s: %q: unknown shell variable $%s (add it to shellVars with where its value comes from)", c.where, c.text, name)
		}
		return val
	})
	if m := capsRE.FindStringSubmatch(w); m != nil && len(m[1]) > 1 {
		val, ok := placeholders[m[1]]
		if !ok {
			t.Errorf("%s: %q: unknown placeholder %s: write a concrete value (known placeholders: TRACE, SCENARIO, RESULT)", c.where, c.text, w)
			return w
		}
		if val == "@results" {
			return results()
		}
		return val
	}
	return w
}

// boolFlags are the flags of explore check that take no value (keep in
// step with explore/cli.go).
var boolFlags = map[string]bool{"json": true, "check-determinism": true, "no-prune": true, "no-reduce": true, "h": true, "help": true}

// runExplore runs the CLI with the command's args from the repository root,
// its outputs in temporary copies, and fails on exit 2 (a usage or harness
// error) or a crash.
func runExplore(t *testing.T, c command, args []string, bin string, results func() string) {
	t.Parallel()
	tmp, mapPath := tempOutputs(t)
	// Drop a synopsis's optional groups: [-shards N] [-json].
	var words []string
	depth := 0
	for _, a := range args {
		if strings.HasPrefix(a, "[") {
			depth++
		}
		if depth == 0 {
			words = append(words, a)
		}
		if strings.HasSuffix(a, "]") && depth > 0 {
			depth--
		}
	}
	for i, a := range words {
		words[i] = substitute(t, c, a, results)
	}
	if t.Failed() {
		return
	}
	// Rewrite output paths into the temporary copies.
	for i := 0; i < len(words); i++ {
		a := words[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		isOut := strings.HasPrefix(a, "-") && (name == "o" || name == "out" || name == "html")
		switch {
		case isOut && hasVal:
			words[i] = "-" + name + "=" + outPath(tmp, mapPath, val)
		case isOut && i+1 < len(words):
			words[i+1] = outPath(tmp, mapPath, words[i+1])
			i++
		default:
			if q := mapPath(a); q != "" {
				words[i] = q
			}
		}
	}
	// Expand globs, as sh would.
	var expanded []string
	for _, a := range words {
		if strings.ContainsAny(a, "*?[") {
			m, _ := filepath.Glob(a)
			if len(m) == 0 {
				m, _ = filepath.Glob(filepath.Join(root, a))
			}
			if len(m) > 0 {
				expanded = append(expanded, m...)
				continue
			}
		}
		expanded = append(expanded, a)
	}
	words = expanded
	// A check whose comment promises an exit status runs with the budget
	// the docs give (the docs promise only affordable ones), so that the
	// promised verdict is the one a reader gets; any other check runs with
	// a small budget, to show that its flags are accepted.
	promise := exitRE.FindStringSubmatch(c.comment)
	if len(words) > 0 && words[0] == "check" {
		words = smallBudget(t, c, words[1:], tmp, promise == nil)
	}
	var captured bytes.Buffer
	var stdout io.Writer = &captured
	if c.out != "" {
		p := mapPath(substitute(t, c, c.out, results))
		if p == "" {
			p = filepath.Join(tmp, "stdout")
		}
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		stdout = f
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, words...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), c.env...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.Exited():
		code = ee.ExitCode()
	default:
		t.Fatalf("%s: %q: explore %s: %v\n%s", c.where, c.text, strings.Join(words, " "), err, stderr.String())
	}
	if m := promise; m != nil {
		want := int(m[1][0] - '0')
		if code != want {
			t.Errorf("%s: %q: explore %s exited %d, but the docs say exit %d:\n%s", c.where, c.text, strings.Join(words, " "), code, want, stderr.String())
		}
		// A check's verdict table says what its status means.
		if verdict := map[int]string{0: "verified", 1: "violation"}[want]; words[0] == "check" && c.out == "" && !strings.Contains(captured.String(), verdict) {
			t.Errorf("%s: %q: the docs promise exit %d, but the output shows no %q verdict:\n%s", c.where, c.text, want, verdict, captured.String())
		}
		return
	}
	if code != 0 && code != 1 {
		t.Errorf("%s: %q: explore %s exited %d (a usage or harness error):\n%s", c.where, c.text, strings.Join(words, " "), code, stderr.String())
	}
}

// exitRE finds the exit status a command's comment promises: "# exit 1: it
// reproduces".
var exitRE = regexp.MustCompile(`\bexit ([0-2])\b`)

// outPath maps an output path into tmp: into the copy of its output dir,
// else by its base name.
func outPath(tmp string, mapPath func(string) string, p string) string {
	if q := mapPath(p); q != "" {
		return q
	}
	return filepath.Join(tmp, filepath.Base(p))
}

// smallBudget rebuilds check's args: the doc's flags (when small, without
// -time and -schedules, then -time 5s -schedules 10), an -out in tmp when
// the doc gives none, then the scenarios.
func smallBudget(t *testing.T, c command, args []string, tmp string, small bool) []string {
	out := []string{"check"}
	hasOut := false
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		name, _, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		takesVal := !hasVal && !boolFlags[name]
		if takesVal && i+1 >= len(args) {
			t.Errorf("%s: %q: flag -%s has no value", c.where, c.text, name)
			return nil
		}
		if name == "out" {
			hasOut = true
		}
		if !small || (name != "time" && name != "schedules") {
			out = append(out, args[i])
			if takesVal {
				out = append(out, args[i+1])
			}
		}
		if takesVal {
			i++
		}
	}
	if small {
		out = append(out, "-time", "5s", "-schedules", "10")
	}
	if !hasOut {
		out = append(out, "-out", filepath.Join(tmp, "opcheck-out"))
	}
	return append(out, args[i:]...)
}

// checkMake: the Makefile has the target (make -n succeeds).
func checkMake(t *testing.T, c command) {
	if len(c.words) < 2 {
		t.Fatalf("%s: %q: name the target", c.where, c.text)
	}
	cmd := exec.Command("make", append([]string{"-n"}, c.words[1:]...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: %q: make -n %s: %v\n%s", c.where, c.text, strings.Join(c.words[1:], " "), err, out)
	}
}

// goTestValueFlags are the go test flags that take a value.
var goTestValueFlags = map[string]bool{"run": true, "bench": true, "fuzz": true, "fuzztime": true, "count": true, "timeout": true, "benchtime": true, "cpu": true, "tags": true, "p": true, "coverprofile": true, "cpuprofile": true, "memprofile": true, "o": true, "skip": true, "parallel": true, "fuzzminimizetime": true}

// goTestBoolFlags are go test's flags without a value.
var goTestBoolFlags = map[string]bool{"v": true, "race": true, "short": true, "benchmem": true, "cover": true, "failfast": true, "json": true, "x": true}

// checkGoTest: the packages exist (in the module at dir, for go -C dir
// test), the functions the -run, -bench and -fuzz patterns name exist, and
// any test binary flag is defined.
func checkGoTest(t *testing.T, c command, dir string, args []string) {
	patterns := map[string]string{}
	var pkgs, custom []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			pkgs = append(pkgs, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case goTestValueFlags[name]:
			if !hasVal {
				if i+1 >= len(args) {
					t.Fatalf("%s: %q: -%s has no value", c.where, c.text, name)
				}
				val = args[i+1]
				i++
			}
			patterns[name] = val
		case goTestBoolFlags[name]:
		case strings.HasPrefix(name, "opcheck."):
			checkOpcheckFlag(t, c, name)
			if !hasVal {
				i++
			}
		default:
			custom = append(custom, name)
		}
	}
	if len(pkgs) == 0 {
		t.Fatalf("%s: %q: name the packages", c.where, c.text)
	}
	cmd := exec.Command("go", append([]string{"list", "-f", "{{.Dir}}"}, pkgs...)...)
	cmd.Dir = filepath.Join(root, dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %q: go list %s: %v\n%s", c.where, c.text, strings.Join(pkgs, " "), err, stderr.String())
	}
	var src strings.Builder
	for _, dir := range strings.Fields(string(out)) {
		files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src.Write(b)
			src.WriteByte('\n')
		}
	}
	funcs := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz|Example)\w*)\(`).FindAllStringSubmatch(src.String(), -1)
	prefixes := map[string][]string{"run": {"Test", "Fuzz", "Example"}, "bench": {"Benchmark"}, "fuzz": {"Fuzz"}}
	for flagName, pat := range patterns {
		kinds, ok := prefixes[flagName]
		if !ok || pat == "^$" || pat == "." || pat == "" {
			continue
		}
		top, _, _ := strings.Cut(pat, "/") // -run Test/subtest: the top level
		re, err := regexp.Compile(top)
		if err != nil {
			t.Errorf("%s: %q: -%s %q: %v", c.where, c.text, flagName, pat, err)
			continue
		}
		var names []string
		for _, f := range funcs {
			for _, k := range kinds {
				if strings.HasPrefix(f[1], k) && re.MatchString(f[1]) {
					names = append(names, f[1])
				}
			}
		}
		if len(names) == 0 {
			t.Errorf("%s: %q: -%s %q matches no func %s...( in the _test.go files of %s", c.where, c.text, flagName, pat, strings.Join(kinds, "/"), strings.Join(pkgs, " "))
		}
	}
	for _, name := range custom {
		if !regexp.MustCompile(`flag\.\w+\("` + regexp.QuoteMeta(name) + `"`).MatchString(src.String()) {
			t.Errorf("%s: %q: -%s is neither a go test flag nor defined by the tests of %s", c.where, c.text, name, strings.Join(pkgs, " "))
		}
	}
}

// checkOpcheckFlag: the -opcheck.* test binary flags are the ones package
// explore registers in every test binary that imports it.
func checkOpcheckFlag(t *testing.T, c command, name string) {
	src, err := os.ReadFile(filepath.Join(root, "explore", "check.go"))
	if err != nil {
		t.Fatal(err)
	}
	verb := strings.TrimPrefix(name, "opcheck.")
	if !bytes.Contains(src, []byte(`flag.String("opcheck."+f.verb`)) || !bytes.Contains(src, []byte(`{"`+verb+`", "opcheck: `)) {
		t.Errorf("%s: %q: -%s is not a flag package explore registers (explore/check.go)", c.where, c.text, name)
	}
}

// checkAllowed: the command is on the allow-list, and the manifests it
// names with -f exist.
func checkAllowed(t *testing.T, c command) {
	keys := make([]string, 0, len(allowed))
	for k := range allowed {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	line := strings.Join(c.words, " ")
	for _, k := range keys {
		if line == k || strings.HasPrefix(line, k+" ") {
			for i, w := range c.words {
				if w == "-f" && i+1 < len(c.words) && regexp.MustCompile(`\.(ya?ml|json)$`).MatchString(c.words[i+1]) {
					if _, err := os.Stat(filepath.Join(root, c.words[i+1])); err != nil {
						t.Errorf("%s: %q: %v", c.where, c.text, err)
					}
				}
			}
			return
		}
	}
	t.Errorf("%s: %q is not run by this test and not on its allow-list: run it from a test, or add it to allowed with a reason", c.where, c.text)
}

// The extraction itself: blocks, continuations, comments, console prompts.
func TestExtract(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "x.md")
	doc := "intro `make vet` and `go test\n./traces/`\n" +
		"```sh\nmake explore   # a comment\nexplore check -json \\\n  -out /results/a SCENARIO > /results/a.json\n```\n" +
		"```go\nfunc main() {}\n```\n" +
		"```\nevent user Create\ngo run ./cmd/explore list\n```\n" +
		"```console\n$ explore list\nzookeeper/buggy\n```\n" +
		"  ```bash\n  OPCHECK_X=1 go test ./traces/ -run TestFixtures\n  ```\n"
	if err := os.WriteFile(md, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range extract(t, md) {
		at := c.where[strings.LastIndex(c.where, ":")+1:]
		if strings.HasSuffix(c.where, "(inline)") {
			at = "inline"
		}
		got = append(got, fmt.Sprintf("%s|%s|%s|%s", strings.Join(c.env, ","), strings.Join(c.words, " "), c.out, at))
	}
	want := []string{
		"|make explore||4",
		"|explore check -json -out /results/a SCENARIO|/results/a.json|5",
		"|go run ./cmd/explore list||13",
		"|explore list||16",
		"OPCHECK_X=1|go test ./traces/ -run TestFixtures||20",
		"|make vet||inline",
		"|go test ./traces/||inline",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("extracted\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
