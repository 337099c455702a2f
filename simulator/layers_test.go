package simulator_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// simulatorLayers assigns every non-test file of package simulator to a
// layer, lowest first. A file may use what its own layer and the layers
// below declare, never what a layer above does: the store knows nothing of
// apiservers, an apiserver nothing of clients, a client or informer
// nothing of hosts, a host nothing of the world that drives it. doc.go
// lists the same layers.
var simulatorLayers = []layer{
	{"store", []string{"store.go", "crd.go", "kinds.go", "copiers.go", "deepequal.go", "semdiffer.go", "validation.go", "defaults.go", "graceful.go", "namespaces.go", "memo.go"}},
	{"apiserver", []string{"apiserver.go"}},
	{"client/informer", []string{"client.go", "informer.go", "cluster.go", "memory.go"}},
	{"host", []string{"host.go", "manager.go", "queue.go"}},
	{"world", []string{"world.go", "run.go", "controller_spec.go", "scheduler.go", "host_steps.go", "workload_driver.go", "until.go", "faults.go", "property_hook.go", "explorer_hooks.go", "statehash.go", "contenthash.go", "fork.go", "scenario.go", "script.go", "helpers.go", "actor_helpers.go", "actor_statefulset.go", "actor_scheduler.go", "actor_kubelet.go", "actor_pvcprotection.go", "actor_gc.go", "actor_namespace.go", "doc.go"}},
}

// layer is a set of files of one package.
type layer struct {
	name  string
	files []string
}

// TestLayersPointOneWay type-checks package simulator and fails on every
// use, in a file of one layer, of a package-level identifier (type,
// function, variable, constant) or of a method or field declared in a file
// of a higher layer.
func TestLayersPointOneWay(t *testing.T) {
	fset, files, pkg, info := typeCheckSimulator(t)
	found := upwardUses(fset, pkg, info, simulatorLayers, layerIndex(t, simulatorLayers, files, fset))
	for _, f := range found {
		t.Error(f)
	}
}

// TestUpwardUsesFindsEveryKindOfReference runs the check on a small
// package of two layers whose lower file uses a type, a field, a method, a
// function, a variable and a constant of the higher one: each is reported
// at its line, and the higher file's use of the lower one is not.
func TestUpwardUsesFindsEveryKindOfReference(t *testing.T) {
	sources := map[string]string{
		"low.go": `package p

type Low struct{ n int }

func useHigh(h *High) int { // line 5: type High
	_ = h.m()       // line 6: method m
	_ = highFunc    // line 7: func highFunc
	_ = highVar     // line 8: var highVar
	_ = highConst   // line 9: const highConst
	local := Low{}  // its own layer: no report
	return h.n + local.n // line 11: field n of High
}
`,
		"high.go": `package p

type High struct{ n int }

func (h *High) m() int { return 0 }

func highFunc() Low { return Low{} }

var highVar = 1

const highConst = 2
`,
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range []string{"low.go", "high.go"} {
		f, err := parser.ParseFile(fset, name, sources[name], parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{}).Check("p", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	layers := []layer{{"low", []string{"low.go"}}, {"high", []string{"high.go"}}}
	var got []string
	for _, u := range upwardUses(fset, pkg, info, layers, layerIndex(t, layers, files, fset)) {
		got = append(got, fmt.Sprintf("%s:%d %s", filepath.Base(u.at.Filename), u.at.Line, u.name))
	}
	want := []string{"low.go:5 type High", "low.go:6 method *High.m", "low.go:7 func highFunc", "low.go:8 var highVar", "low.go:9 const highConst", "low.go:11 field n"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("upward uses:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// upwardReference is one use of an identifier declared in a higher layer.
type upwardReference struct {
	at, declared         token.Position
	name                 string
	fromLayer, intoLayer string
}

func (u upwardReference) String() string {
	return fmt.Sprintf("%s:%d (layer %s) uses %s, declared in %s (layer %s): move the code down, or let the lower layer own a small interface or callback the higher one fills in",
		filepath.Base(u.at.Filename), u.at.Line, u.fromLayer, u.name, filepath.Base(u.declared.Filename), u.intoLayer)
}

// layerIndex maps each file name to its layer's index, failing on a
// non-test file the table does not place (a new file must pick a layer).
func layerIndex(t *testing.T, layers []layer, files []*ast.File, fset *token.FileSet) map[string]int {
	t.Helper()
	idx := map[string]int{}
	for i, l := range layers {
		for _, f := range l.files {
			idx[f] = i
		}
	}
	present := map[string]bool{}
	for _, f := range files {
		name := filepath.Base(fset.Position(f.Package).Filename)
		present[name] = true
		if _, ok := idx[name]; !ok {
			t.Fatalf("%s is in no layer of simulatorLayers (layers_test.go): add it to the layer whose code it is", name)
		}
	}
	for name := range idx {
		if !present[name] {
			t.Fatalf("simulatorLayers (layers_test.go) lists %s, which is not a file of the package: remove it", name)
		}
	}
	return idx
}

// upwardUses lists, in file and line order, the uses that point up.
func upwardUses(fset *token.FileSet, pkg *types.Package, info *types.Info, layers []layer, layerOf map[string]int) []upwardReference {
	var found []upwardReference
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg || !declaredOutsideFunctions(obj, pkg) {
			continue
		}
		at, declared := fset.Position(id.Pos()), fset.Position(obj.Pos())
		from, into := layerOf[filepath.Base(at.Filename)], layerOf[filepath.Base(declared.Filename)]
		if into > from {
			found = append(found, upwardReference{at: at, declared: declared, name: describe(obj), fromLayer: layers[from].name, intoLayer: layers[into].name})
		}
	}
	sort.Slice(found, func(i, j int) bool {
		a, b := found[i].at, found[j].at
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return found
}

// declaredOutsideFunctions: a package-level object, a method, or a field
// (of a named struct type or an anonymous one at package level). Locals
// and parameters belong to the function that declares them.
func declaredOutsideFunctions(obj types.Object, pkg *types.Package) bool {
	switch o := obj.(type) {
	case *types.Func:
		return o.Type().(*types.Signature).Recv() != nil || o.Parent() == pkg.Scope()
	case *types.Var:
		return o.IsField() || o.Parent() == pkg.Scope()
	case *types.PkgName, *types.Label:
		return false
	default:
		return obj.Parent() == pkg.Scope()
	}
}

// describe names an object for the report: a method or field with its
// owner's type.
func describe(obj types.Object) string {
	switch o := obj.(type) {
	case *types.Func:
		if recv := o.Type().(*types.Signature).Recv(); recv != nil {
			return "method " + types.TypeString(recv.Type(), types.RelativeTo(o.Pkg())) + "." + o.Name()
		}
		return "func " + o.Name()
	case *types.Var:
		if o.IsField() {
			return "field " + o.Name()
		}
		return "var " + o.Name()
	case *types.TypeName:
		return "type " + o.Name()
	case *types.Const:
		return "const " + o.Name()
	}
	return obj.Name()
}

// typeCheckSimulator parses the package's non-test files and type-checks
// them against the export data of their dependencies, which `go list
// -export` builds (from the build cache, as go test has just compiled
// them).
func typeCheckSimulator(t *testing.T) (*token.FileSet, []*ast.File, *types.Package, *types.Info) {
	t.Helper()
	exports := exportData(t)
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %q from go list -export", path)
		}
		return os.Open(file)
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: imp}
	pkg, err := conf.Check("github.com/opcheck/opcheck/simulator", fset, files, info)
	if err != nil {
		t.Fatalf("type-checking package simulator: %v", err)
	}
	return fset, files, pkg, info
}

// exportData maps every dependency of the package to its export data file.
func exportData(t *testing.T) map[string]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, file, ok := strings.Cut(sc.Text(), "\t")
		if ok && file != "" {
			exports[path] = file
		}
	}
	if exports["sigs.k8s.io/controller-runtime/pkg/client"] == "" {
		t.Fatalf("go list -export listed no export data for the package's dependencies:\n%s", out)
	}
	return exports
}
