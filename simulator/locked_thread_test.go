package simulator_test

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/simulator"
)

// threadLocker holds its OS thread across two API calls.
type threadLocker struct{ c client.Client }

func (r *threadLocker) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var a, b WebApp
	_ = r.c.Get(ctx, req.NamespacedName, &a)
	_ = r.c.Get(ctx, req.NamespacedName, &b)
	return reconcile.Result{}, nil
}

// The limitation docs/fidelity.md states: a reconciler that holds
// runtime.LockOSThread across an API call stops the process, since the Go
// runtime will not switch a coroutine locked to its thread. The run happens
// in a child process (this test binary, run again), which must die with the
// runtime's message; if a Go release lifts the restriction, this fails and
// the doc's row must change.
func TestLockedThreadStopsTheProcess(t *testing.T) {
	if os.Getenv("OPCHECK_LOCKED_THREAD_CHILD") == "1" {
		sc := misbehavingScenario("locker", func(c client.Client) reconcile.Reconciler { return &threadLocker{c: c} }, 0)
		runScripted(t, sc, nil, simulator.RunOptions{})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockedThreadStopsTheProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "OPCHECK_LOCKED_THREAD_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child process ran a thread-locking reconciler to the end; docs/fidelity.md says it stops the process:\n%s", out)
	}
	if want := "coro: OS thread locking must match locking at coroutine creation"; !strings.Contains(string(out), want) {
		t.Fatalf("the child process failed without the runtime's %q:\n%s", want, out)
	}
}
