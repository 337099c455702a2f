package explore

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets"
)

// BenchmarkExplore measures, for every shipped scenario, the cost of one
// random schedule under the harness (sub-benchmark "harness": one schedule
// per op, with schedules/s and ns/step) and the cost of the same
// reconciles without it ("reconciler": the reconciles of a few recorded
// schedules, each replayed against a plain map client seeded with the
// objects the store held when it started, with ns/reconcile and the
// schedules/s the reconciles alone would allow). The ratio of the two
// ns/schedule figures is the harness overhead: everything but the
// reconciler's own code (the simulated apiserver and caches, scheduling,
// built-in actors, faults, state hashing, properties, history).
//
//	go test -run '^$' -bench BenchmarkExplore -benchtime 200x ./explore/
func BenchmarkExplore(b *testing.B) {
	for _, sc := range targets.All() {
		name := strings.ReplaceAll(sc.Name, "/", "_")
		b.Run(name+"/harness", func(b *testing.B) {
			schedules, steps := 0, 0
			for i := 0; i < b.N; i++ {
				rep := Explore(sc, Options{Strategy: StrategyRandom, Schedules: 1, Seed: uint64(i), Workers: 1})
				if rep.Err != nil {
					b.Fatal(rep.Err)
				}
				schedules += rep.Schedules
				steps += rep.Steps
			}
			b.ReportMetric(float64(schedules)/b.Elapsed().Seconds(), "schedules/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
			b.ReportMetric(float64(steps)/float64(schedules), "steps/schedule")
		})
		b.Run(name+"/reconciler", func(b *testing.B) {
			if spec := &sc.Controllers[0]; spec.New == nil && spec.NewWithEnv == nil {
				b.Skipf("%s: its reconciler is built by Setup against a manager, which the map client does not stand in for", sc.Name)
			}
			recs, schedules := recordReconciles(b, sc, 8)
			b.ResetTimer()
			n := 0
			for i := 0; i < b.N; i++ {
				for _, r := range recs {
					r.run()
					n++
				}
			}
			perSchedule := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(schedules)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/reconcile")
			b.ReportMetric(1e9/perSchedule, "schedules/s")
		})
	}
}

// recordedReconcile is one reconcile of a recorded schedule: the request
// and the store's objects when it started.
type recordedReconcile struct {
	sc      *simulator.Scenario
	world   *simulator.World // the schedule's world, for external systems
	actor   model.Actor
	req     reconcile.Request
	objects map[string]client.Object
}

// run replays the reconcile with a fresh reconciler on a fresh map client:
// what the reconcile costs without a harness.
func (r *recordedReconcile) run() {
	objs := make(map[string]client.Object, len(r.objects))
	for k, v := range r.objects {
		objs[k] = v
	}
	c := &mapClient{scheme: r.sc.Scheme, objs: objs}
	spec := &r.sc.Controllers[0]
	var rec reconcile.Reconciler
	if spec.New != nil {
		rec = spec.New(c)
	} else {
		rec = spec.NewWithEnv(&simulator.Env{Client: c, World: r.world, Actor: r.actor})
	}
	defer func() { _ = recover() }() // a panicking reconcile costs what it cost
	_, _ = rec.Reconcile(context.Background(), r.req)
}

// recordReconciles runs schedules of sc (random, seeds 0..n-1) and returns
// their reconciles, each with the objects of the store when it started.
func recordReconciles(b *testing.B, sc *simulator.Scenario, n int) ([]*recordedReconcile, int) {
	b.Helper()
	var out []*recordedReconcile
	for seed := range n {
		res, err := RunSchedule(sc, StrategyRandom, uint64(seed), nil)
		if err != nil {
			b.Fatal(err)
		}
		store := map[string]client.Object{}
		for i := range res.History.Events {
			e := &res.History.Events[i]
			switch {
			case e.Change == model.ChangeDeleted:
				delete(store, objKey(e.Kind, e.Namespace, e.Name))
			case e.Change != model.ChangeNone && e.Object != nil:
				store[objKey(e.Kind, e.Namespace, e.Name)] = e.Object.(client.Object)
			case e.Op == model.OpReconcile && e.Actor.Group() == model.GroupController:
				snap := make(map[string]client.Object, len(store))
				for k, v := range store {
					snap[k] = v
				}
				out = append(out, &recordedReconcile{sc: sc, world: res.World, actor: e.Actor, req: reconcile.Request{NamespacedName: client.ObjectKey{Namespace: e.Namespace, Name: e.Name}}, objects: snap})
			}
		}
	}
	if len(out) == 0 {
		b.Fatalf("%s: no reconcile in %d schedules", sc.Name, n)
	}
	return out, n
}

func objKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// mapClient is the least a reconciler needs: typed objects in a map,
// copied on every read and write (as any client copies), resourceVersions
// counted, label selectors and namespaces honoured; no validation, no
// caches, no events, no history. Methods the shipped reconcilers do not
// call are left to the embedded nil interface.
type mapClient struct {
	client.Client
	scheme *runtime.Scheme
	objs   map[string]client.Object
	rev    int
}

func (c *mapClient) kind(obj runtime.Object) (schema.GroupVersionKind, error) {
	gvks, _, err := c.scheme.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return gvks[0], nil
}

func (c *mapClient) key(obj client.Object) (string, schema.GroupVersionKind, error) {
	gvk, err := c.kind(obj)
	return objKey(gvk.Kind, obj.GetNamespace(), obj.GetName()), gvk, err
}

// reflectSet stores a copy the caller owns into its typed object.
func reflectSet(dst client.Object, src runtime.Object) {
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
}

func (c *mapClient) Scheme() *runtime.Scheme { return c.scheme }

func (c *mapClient) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	gvk, err := c.kind(obj)
	if err != nil {
		return err
	}
	o, ok := c.objs[objKey(gvk.Kind, key.Namespace, key.Name)]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, key.Name)
	}
	reflectSet(obj, o.DeepCopyObject())
	return nil
}

func (c *mapClient) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	gvk, err := c.kind(list)
	if err != nil {
		return err
	}
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	prefix := strings.TrimSuffix(gvk.Kind, "List") + "/"
	keys := make([]string, 0, len(c.objs))
	for k := range c.objs {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var items []runtime.Object
	for _, k := range keys {
		obj := c.objs[k]
		if o.Namespace != "" && obj.GetNamespace() != o.Namespace {
			continue
		}
		if o.LabelSelector != nil && !o.LabelSelector.Matches(labels.Set(obj.GetLabels())) {
			continue
		}
		items = append(items, obj.DeepCopyObject())
	}
	return meta.SetList(list, items)
}

func (c *mapClient) write(obj client.Object, create bool) error {
	key, gvk, err := c.key(obj)
	if err != nil {
		return err
	}
	_, exists := c.objs[key]
	switch {
	case create && exists:
		return apierrors.NewAlreadyExists(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, obj.GetName())
	case !create && !exists:
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, obj.GetName())
	}
	c.rev++
	obj.SetResourceVersion(strconv.Itoa(c.rev))
	c.objs[key] = obj.DeepCopyObject().(client.Object)
	return nil
}

func (c *mapClient) Create(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
	return c.write(obj, true)
}

func (c *mapClient) Update(_ context.Context, obj client.Object, _ ...client.UpdateOption) error {
	return c.write(obj, false)
}

func (c *mapClient) Delete(_ context.Context, obj client.Object, _ ...client.DeleteOption) error {
	key, gvk, err := c.key(obj)
	if err != nil {
		return err
	}
	if _, ok := c.objs[key]; !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, obj.GetName())
	}
	delete(c.objs, key)
	return nil
}

func (c *mapClient) Status() client.SubResourceWriter { return mapStatus{c} }

type mapStatus struct{ c *mapClient }

func (s mapStatus) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return fmt.Errorf("mapClient: status create not supported")
}

func (s mapStatus) Update(_ context.Context, obj client.Object, _ ...client.SubResourceUpdateOption) error {
	return s.c.write(obj, false)
}

func (s mapStatus) Patch(context.Context, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
	return fmt.Errorf("mapClient: status patch not supported")
}

func (s mapStatus) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return fmt.Errorf("mapClient: status apply not supported")
}
