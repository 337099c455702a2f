package simulator

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// ErrApplyNotSupported is returned by Apply: server-side apply needs field
// ownership tracking, which opcheck does not model.
var ErrApplyNotSupported = errors.New("opcheck: server-side apply (client.Apply, Patch with client.Apply) is not supported by the simulated apiserver; use Create/Update/Patch with a merge or strategic merge patch")

// reader is where a client's Get and List are served: an apiserver (cache or
// quorum) or a controller's informer cache.
type reader interface {
	read(k *kindInfo, namespace, name string) (obj client.Object, readRev model.Revision, stale bool, err error)
	readList(k *kindInfo, o *ListOptions) (objs []client.Object, readRev model.Revision, stale bool, err error)
	// informerCache reports whether reads come from a controller-runtime
	// informer cache (which stamps apiVersion/kind on typed objects and
	// serves no continue tokens) rather than from an apiserver (whose typed
	// answers come back with empty apiVersion/kind).
	informerCache() bool
}

type serverReads struct {
	server *APIServer
	quorum bool
}

func (r serverReads) read(k *kindInfo, namespace, name string) (client.Object, model.Revision, bool, error) {
	return r.server.read(k, namespace, name, r.quorum)
}

func (r serverReads) readList(k *kindInfo, o *ListOptions) ([]client.Object, model.Revision, bool, error) {
	return r.server.readList(k, o, r.quorum)
}

func (r serverReads) informerCache() bool { return false }

// Client is controller-runtime's client.Client over the simulated cluster.
// Writes go to the store through one apiserver; reads are served from that
// apiserver's caches, from the head (quorum), or from a controller's
// informers. Every call is recorded as one history event, and, when the
// client belongs to a controller under test, is one scheduling step: the
// gate hands control to the scheduler before the call runs.
type Client struct {
	cluster *Cluster
	server  *APIServer
	actor   model.Actor
	reads   reader
	// gate is called before every call; a controller host uses it to stop
	// the reconciler at each API call. It may never return (a crash).
	gate func(ctx context.Context)
	// silent clients record nothing: ground-truth reads of the harness.
	silent bool
	// dropAnswers: the caller drops every object it writes once the call
	// returns (a built-in actor's request, built for the one write), so a
	// successful write does not copy the stored result back into it.
	// Errors and the history are the same either way.
	dropAnswers bool
	// listScratch is where List applies its options (listOptions).
	listScratch client.ListOptions
	// listSelection is what List selects with, from its options.
	listSelection ListOptions
	// selectors are the label selectors this client's Lists rendered
	// lately, with their text (see selectorText).
	selectors []renderedSelector
	// memory is the digest of a controller that keeps memory between
	// reconciles (ControllerSpec.KeepsMemory): its reads add the content
	// of what they return.
	memory *reconcilerMemory
}

var _ client.Client = (*Client)(nil)

// renderedSelector is a label selector's requirements (a private copy)
// and its String().
type renderedSelector struct {
	reqs labels.Requirements
	text string
}

// maxRenderedSelectors bounds a client's cache of rendered selectors.
const maxRenderedSelectors = 8

// selectorText is sel.String(), the Detail of a List's event. A
// controller builds a new selector for every List (client.MatchingLabels),
// mostly with the same few requirements; rendering each was 2% of a
// KubeRay schedule. The text of requirements equal to ones rendered before
// is the text rendered then: String() is a function of the requirements.
func (c *Client) selectorText(sel labels.Selector) string {
	reqs, selectable := sel.Requirements()
	if !selectable || c.slowSelectors() {
		return sel.String()
	}
	for _, r := range c.selectors {
		if requirementsEqual(r.reqs, reqs) {
			return r.text
		}
	}
	text := sel.String()
	own := make(labels.Requirements, len(reqs))
	for i := range reqs {
		reqs[i].DeepCopyInto(&own[i])
	}
	if len(c.selectors) == maxRenderedSelectors {
		c.selectors = c.selectors[1:]
	}
	c.selectors = append(c.selectors, renderedSelector{own, text})
	return text
}

// listOptions is (&client.ListOptions{}).ApplyOptions(opts), as a value:
// the options apply themselves through an interface, so the struct they
// fill escapes, and a new one per List was 1% of a KubeRay schedule's
// bytes. The client's own scratch struct is filled, copied out and
// cleared before anything else runs (List calls it before its gate).
func (c *Client) listOptions(opts []client.ListOption) client.ListOptions {
	s := &c.listScratch
	s.ApplyOptions(opts)
	o := *s
	*s = client.ListOptions{}
	return o
}

// slowSelectors: with the write fast paths off (the differential tests'
// slow side), every selector is rendered afresh.
func (c *Client) slowSelectors() bool { return c.cluster.Store.slowWrites }

func requirementsEqual(a, b labels.Requirements) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// Actor is who the client's calls are recorded as.
func (c *Client) Actor() model.Actor { return c.actor }

func (c *Client) enter(ctx context.Context) {
	if c.gate != nil {
		c.gate(ctx)
	}
}

func (c *Client) record(e model.Event) {
	if c.silent {
		return
	}
	e.Actor = c.actor
	if e.Server == 0 {
		e.Server = c.server.ID
	}
	c.cluster.Record(e)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	if s, ok := err.(apierrors.APIStatus); ok {
		st := s.Status()
		return string(st.Reason) + ": " + st.Message
	}
	return err.Error()
}

// Scheme implements client.Client.
func (c *Client) Scheme() *runtime.Scheme { return c.cluster.Store.kinds.scheme }

// RESTMapper implements client.Client.
func (c *Client) RESTMapper() meta.RESTMapper { return c.cluster.Store.kinds.restMapper() }

// GroupVersionKindFor implements client.Client.
func (c *Client) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	k, err := c.cluster.Store.kinds.forObject(obj)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return k.gvk, nil
}

// IsObjectNamespaced implements client.Client.
func (c *Client) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	k, err := c.cluster.Store.kinds.forObject(obj)
	if err != nil {
		return false, err
	}
	return k.namespaced, nil
}

// fill copies a stored object into the caller's object, which may be the
// same Go type, *unstructured.Unstructured or *metav1.PartialObjectMetadata.
// A typed object gets an empty apiVersion/kind unless keepTypeMeta, as
// controller-runtime's typed client decodes answers (the decoder clears
// them); its informer cache stamps them back (keepTypeMeta). Unstructured
// and metadata-only objects always keep theirs.
func fill(k *kindInfo, dst client.Object, stored client.Object, keepTypeMeta bool) error {
	if pm, ok := dst.(*metav1.PartialObjectMetadata); ok {
		fillMetadata(pm, stored)
		return nil
	}
	if u, ok := dst.(*unstructured.Unstructured); ok {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(stored)
		if err != nil {
			return err
		}
		u.SetUnstructuredContent(m)
		return nil
	}
	if reflect.TypeOf(dst) != reflect.TypeOf(stored) {
		return fmt.Errorf("opcheck: cannot read %T into %T", stored, dst)
	}
	k.copyInto(dst, stored)
	if !keepTypeMeta {
		dst.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
	return nil
}

// typed returns obj as the registered Go type (converting unstructured).
func (c *Client) typed(k *kindInfo, obj client.Object) (client.Object, error) {
	if _, ok := obj.(*metav1.PartialObjectMetadata); ok {
		// controller-runtime's client refuses these before any request.
		return nil, fmt.Errorf("opcheck: a PartialObjectMetadata holds only metadata: it can be read, patched and deleted but not created or updated (Patch it, or write the typed %s)", k.gvk.Kind)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := k.newObject()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), out); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding %s %s: %v", k.gvk.Kind, u.GetName(), err))
	}
	return out, nil
}

// Get implements client.Reader.
func (c *Client) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	k, err := c.cluster.Store.kinds.forObject(obj)
	if err != nil {
		return err
	}
	if isBindingKind(k) {
		return createOnly(k, "get")
	}
	c.enter(ctx)
	stored, readRev, stale, err := c.reads.read(k, key.Namespace, key.Name)
	e := model.Event{Op: model.OpGet, Kind: k.gvk.Kind, Namespace: key.Namespace, Name: key.Name, ReadRev: readRev, HeadRev: c.cluster.Store.rev, Stale: stale, Err: errString(err)}
	if err == nil {
		e.Rev = revOf(stored)
		err = fill(k, obj, stored, c.reads.informerCache())
		if c.memory != nil {
			c.memory.answer(stored)
		}
	}
	c.record(e)
	return err
}

func revOf(obj client.Object) model.Revision {
	var r int64
	for _, ch := range obj.GetResourceVersion() {
		r = r*10 + int64(ch-'0')
	}
	return model.Revision(r)
}

// List implements client.Reader. Through an apiserver, Limit pages the list
// and Continue resumes it from the first page's snapshot (consistent, as
// etcd's paginated lists are); through a controller's informer cache, as
// controller-runtime's cache does, Limit truncates without a continue token
// and Continue is an error.
func (c *Client) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	k, err := c.cluster.Store.kinds.forObject(list)
	if err != nil {
		return err
	}
	if isBindingKind(k) {
		return createOnly(k, "list")
	}
	o := c.listOptions(opts)
	cached := c.reads.informerCache()
	if cached && o.Continue != "" {
		return errors.New("continue list option is not supported by the cache (opcheck serves a controller's reads from its informer cache, as controller-runtime does; list from an API reader to page)")
	}
	c.enter(ctx)
	// The client's own ListOptions: through the reader interface a new one
	// would escape. Nothing parks between here and its clearing below,
	// which keeps the selection's arrays (emptied, the objects let go) for
	// the next List: nothing keeps what a List selected once it returns.
	lo := &c.listSelection
	*lo = ListOptions{Namespace: o.Namespace, Labels: o.LabelSelector, Fields: o.FieldSelector, keys: lo.keys[:0], objs: lo.objs[:0]}
	defer func() {
		clear(lo.objs)
		*lo = ListOptions{keys: lo.keys[:0], objs: lo.objs[:0]}
	}()
	var objs []client.Object
	var readRev model.Revision
	var stale bool
	if o.Continue != "" {
		objs, readRev, stale, err = c.continueList(k, lo, o.Continue)
	} else {
		objs, readRev, stale, err = c.reads.readList(k, lo)
	}
	// The keys selectSorted found objs under, when objs are (a prefix
	// of) what it returned: not for a continued list (objs start after
	// the token's key) nor an indexed one (indexedList selects with
	// options of its own).
	keys := lo.keys
	if o.Continue != "" || len(keys) < len(objs) || c.slowSelectors() {
		keys = nil
	}
	var next string
	var remaining int64
	if err == nil && o.Limit > 0 && int64(len(objs)) > o.Limit {
		if !cached {
			last := objs[o.Limit-1]
			next = encodeContinue(readRev, objectKey(k, last.GetNamespace(), last.GetName()))
			remaining = int64(len(objs)) - o.Limit
		}
		objs = objs[:o.Limit]
	}
	e := model.Event{Op: model.OpList, Kind: k.gvk.Kind, Namespace: o.Namespace, ReadRev: readRev, HeadRev: c.cluster.Store.rev, Stale: stale, Err: errString(err)}
	if lo.Labels != nil && !lo.Labels.Empty() {
		e.Detail = c.selectorText(lo.Labels)
	}
	if err == nil {
		e.Versions = make([]model.Version, len(objs))
		for i, obj := range objs {
			name := ""
			if keys != nil {
				name = keys[i]
			} else {
				name = objectKey(k, obj.GetNamespace(), obj.GetName())
			}
			e.Versions[i] = model.Version{Name: name, Rev: revOf(obj)}
			if c.memory != nil {
				c.memory.answer(obj)
			}
		}
		err = fillList(k, list, objs, cached)
		if lm, ok := list.(metav1.ListInterface); ok {
			lm.SetResourceVersion(readRev.String())
			lm.SetContinue(next)
			lm.SetRemainingItemCount(nil)
			// The apiserver counts the remaining items only when no
			// selector filters them.
			if next != "" && (lo.Labels == nil || lo.Labels.Empty()) && (lo.Fields == nil || lo.Fields.Empty()) {
				count := remaining // escapes: only on this rare path
				lm.SetRemainingItemCount(&count)
			}
		}
	}
	c.record(e)
	return err
}

// continuePrefix marks opcheck's continue tokens: base64 of
// "opcheck-continue/<revision>/<last key served>".
const continuePrefix = "opcheck-continue/"

func encodeContinue(rev model.Revision, lastKey string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(continuePrefix + rev.String() + "/" + lastKey))
}

func decodeContinue(token string) (model.Revision, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	rest, ok := strings.CutPrefix(string(raw), continuePrefix)
	if err != nil || !ok {
		return 0, "", apierrors.NewBadRequest(fmt.Sprintf("continue key is not valid: %q is not a continue token of this apiserver (pass the Continue of the previous page's list metadata)", token))
	}
	revText, key, _ := strings.Cut(rest, "/")
	rev, err := strconv.ParseUint(revText, 10, 64)
	if err != nil {
		return 0, "", apierrors.NewBadRequest(fmt.Sprintf("continue key is not valid: bad revision %q in token %q", revText, token))
	}
	return model.Revision(rev), key, nil
}

// continueList serves a page after the first: the objects after the token's
// key in the kind's state at the token's revision, so that every page of
// one list shows the same snapshot whatever was written in between.
func (c *Client) continueList(k *kindInfo, o *ListOptions, token string) ([]client.Object, model.Revision, bool, error) {
	rev, after, err := decodeContinue(token)
	if err != nil {
		return nil, 0, false, err
	}
	if err := validateFieldSelector(o.Fields); err != nil {
		return nil, 0, false, err
	}
	store := c.cluster.Store
	objs := selectSorted(store.snapshot(k, rev), o)
	i := sort.Search(len(objs), func(i int) bool {
		return objectKey(k, objs[i].GetNamespace(), objs[i].GetName()) > after
	})
	changes := store.table(k).changes
	stale := len(changes) > 0 && changes[len(changes)-1].Rev > rev
	return objs[i:], rev, stale, nil
}

// fillMetadata fills a metadata-only read: the stored object's kind and
// metadata, as the apiserver's PartialObjectMetadata representation.
func fillMetadata(pm *metav1.PartialObjectMetadata, stored client.Object) {
	gvk := pm.GroupVersionKind()
	if acc, ok := stored.(metav1.ObjectMetaAccessor); ok {
		if om, ok := acc.GetObjectMeta().(*metav1.ObjectMeta); ok {
			pm.ObjectMeta = *om.DeepCopy()
		}
	}
	pm.SetGroupVersionKind(gvk)
}

func fillList(k *kindInfo, list client.ObjectList, objs []client.Object, keepTypeMeta bool) error {
	if pl, ok := list.(*metav1.PartialObjectMetadataList); ok {
		pl.Items = make([]metav1.PartialObjectMetadata, len(objs))
		gvk := pl.GroupVersionKind()
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
		for i, obj := range objs {
			pl.Items[i].SetGroupVersionKind(gvk)
			fillMetadata(&pl.Items[i], obj)
		}
		return nil
	}
	if ul, ok := list.(*unstructured.UnstructuredList); ok {
		ul.Items = ul.Items[:0]
		for _, obj := range objs {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
			if err != nil {
				return err
			}
			ul.Items = append(ul.Items, unstructured.Unstructured{Object: m})
		}
		return nil
	}
	if !keepTypeMeta {
		list.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
	if items := typedItems(k, list); items.IsValid() {
		// The usual case, a typed list of the kind's Go type: copy each
		// stored object straight into its slot of a new Items slice.
		slice := reflect.MakeSlice(items.Type(), len(objs), len(objs))
		for i, obj := range objs {
			slot := slice.Index(i).Addr()
			k.copyIntoValue(slot, obj)
			if !keepTypeMeta {
				slot.Interface().(client.Object).GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
			}
		}
		items.Set(slice)
		return nil
	}
	out := make([]runtime.Object, len(objs))
	for i, obj := range objs {
		out[i] = obj.DeepCopyObject()
		if !keepTypeMeta {
			out[i].GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		}
	}
	return meta.SetList(list, out)
}

// typedItems returns the settable Items field of a typed list whose items
// are values of the kind's Go type ([]T), or an invalid Value for any other
// list shape (meta.SetList handles those).
func typedItems(k *kindInfo, list client.ObjectList) reflect.Value {
	v := reflect.ValueOf(list)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	items := v.Elem().FieldByName("Items")
	if !items.IsValid() || items.Kind() != reflect.Slice || items.Type().Elem() != k.typ || !items.CanSet() {
		return reflect.Value{}
	}
	return items
}

// writeEvent records a write and copies the stored result back to obj. A
// dry-run write is recorded with Detail "dryRun" and no change: nothing was
// stored.
func (c *Client) writeEvent(op model.Op, k *kindInfo, obj client.Object, head model.Revision, ch *Change, stored client.Object, err error, dry bool) error {
	return c.writeEventSpare(op, k, obj, head, ch, stored, nil, err, dry)
}

// writeEventSpare is writeEvent for a write that may come with the store's
// spare answer (see Store.update): the caller's object becomes the spare
// instead of a copy of stored.
func (c *Client) writeEventSpare(op model.Op, k *kindInfo, obj client.Object, head model.Revision, ch *Change, stored, spare client.Object, err error, dry bool) error {
	e := model.Event{Op: op, Kind: k.gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), HeadRev: head, Err: errString(err)}
	if !k.namespaced {
		e.Namespace = ""
	}
	if dry {
		e.Detail = "dryRun"
	}
	if ch != nil {
		if !dry {
			e.Rev, e.Change, e.Object = ch.Rev, ch.Type, ch.Object
		}
		e.Name = ch.Object.GetName()
		stored = ch.Object
	} else if stored != nil && !dry {
		e.Rev = revOf(stored)
	}
	c.record(e)
	if c.dropAnswers && c.cluster.Store.poisonDropped {
		v := reflect.ValueOf(obj).Elem()
		v.Set(reflect.Zero(v.Type()))
	}
	if err == nil && stored != nil && !c.dropAnswers {
		if spare != nil && giveSpare(obj, spare) {
			return nil
		}
		if (op == model.OpUpdateStatus || op == model.OpPatchStatus) && copyBack(k, obj, stored) {
			return nil
		}
		return fill(k, obj, stored, false)
	}
	return err
}

// copyBack makes the caller's object of a successful status write equal to
// the stored result, as fill does, copying only the metadata when the
// caller's spec and status already equal the stored ones. They usually do:
// a status write stores the request's status and keeps the stored spec,
// which the caller read. The caller keeps its own spec and status, which
// share nothing with the store (they were never the store's), and gets a
// copy of the stored metadata. It reports false, having changed nothing,
// when anything else differs or the object is not of the kind's Go type:
// fill copies it all then. Other writes do not try it: defaulting, a
// create's new status and a main-resource write's kept status make the
// comparison fail most of the time (in the zookeeper/fixed search, 94% of
// StatefulSet updates), after walking much of the spec.
func copyBack(k *kindInfo, dst, stored client.Object) bool {
	if reflect.TypeOf(dst) != reflect.TypeOf(stored) {
		return false
	}
	for _, i := range k.specFields {
		if !k.fieldSame(dst, stored, i) {
			return false
		}
	}
	if k.statusField >= 0 && !k.fieldSame(dst, stored, k.statusField) {
		return false
	}
	dm, ok := objectMeta(dst)
	sm, ok2 := objectMeta(stored)
	if !ok || !ok2 {
		return false
	}
	sm.DeepCopyInto(dm)
	dst.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return true
}

// dryRun validates a request's dryRun option: empty (a real write) or
// ["All"] (validate and answer, store nothing).
func dryRun(values []string, what string) (bool, error) {
	if len(values) == 0 {
		return false, nil // what ValidateDryRun accepts, without its field path
	}
	if errs := metav1validation.ValidateDryRun(field.NewPath("dryRun"), values); len(errs) > 0 {
		return false, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: what}, "", errs)
	}
	return len(values) > 0, nil
}

// storeWrite runs one store write, for real or, with dry, as a dry run.
func (c *Client) storeWrite(dry bool, write func()) {
	if dry {
		c.cluster.Store.DryRun(write)
		return
	}
	write()
}

// Create implements client.Writer.
func (c *Client) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	k, err := c.cluster.Store.kinds.forObject(obj)
	if err != nil {
		return err
	}
	dry, err := dryRun((&client.CreateOptions{}).ApplyOptions(opts).DryRun, "CreateOptions")
	if err != nil {
		return err
	}
	c.enter(ctx)
	head := c.cluster.Store.rev
	in, err := c.typed(k, obj)
	if err == nil && isBindingKind(k) {
		return c.bind(in.(*corev1.Binding), head, dry)
	}
	var ch *Change
	if err == nil {
		c.storeWrite(dry, func() { ch, err = c.cluster.Store.create(k, in, false) })
	}
	return c.writeEvent(model.OpCreate, k, obj, head, ch, nil, err, dry)
}

// createOnly answers every verb but create on a create-only kind
// (Binding) with 405 MethodNotSupported, as the apiserver does.
func createOnly(k *kindInfo, verb string) error {
	return apierrors.NewMethodNotSupported(k.gr, verb)
}

// bind creates a Binding: the pod's change is recorded as a Create with
// Detail "Binding" on the pod.
func (c *Client) bind(b *corev1.Binding, head model.Revision, dry bool) error {
	var ch *Change
	var err error
	c.storeWrite(dry, func() { ch, err = c.cluster.Store.Bind(b) })
	e := model.Event{Op: model.OpCreate, Kind: "Pod", Namespace: b.Namespace, Name: b.Name, HeadRev: head, Err: errString(err), Detail: "Binding"}
	if dry {
		e.Detail += " dryRun"
	}
	if ch != nil && !dry {
		e.Rev, e.Change, e.Object = ch.Rev, ch.Type, ch.Object
	}
	c.record(e)
	return err
}

// Update implements client.Writer.
func (c *Client) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.update(ctx, obj, false, (&client.UpdateOptions{}).ApplyOptions(opts).DryRun)
}

func (c *Client) update(ctx context.Context, obj client.Object, status bool, dryRunOpt []string) error {
	k, err := c.cluster.Store.kinds.forObject(obj)
	if err != nil {
		return err
	}
	if isBindingKind(k) {
		return createOnly(k, "update")
	}
	dry, err := dryRun(dryRunOpt, "UpdateOptions")
	if err != nil {
		return err
	}
	c.enter(ctx)
	head := c.cluster.Store.rev
	op := model.OpUpdate
	if status {
		op = model.OpUpdateStatus
	}
	in, err := c.typed(k, obj)
	var ch *Change
	var stored, spare client.Object
	if err == nil {
		c.storeWrite(dry, func() {
			if status {
				ch, stored, err = c.cluster.Store.UpdateStatus(in)
			} else {
				ch, stored, spare, err = c.cluster.Store.update(in, !c.dropAnswers)
			}
		})
	}
	return c.writeEventSpare(op, k, obj, head, ch, stored, spare, err, dry)
}

// giveSpare makes the caller's object of an update that changed nothing
// the store's spare answer (see Store.update), which equals the stored
// object apart from TypeMeta and is nobody else's, in place of the deep
// copy fill would make: the same contents, one copy fewer. It reports
// false, having changed nothing, when obj is not of the spare's Go type
// (an unstructured request): fill answers those.
func giveSpare(obj, spare client.Object) bool {
	dst, src := reflect.ValueOf(obj), reflect.ValueOf(spare)
	if dst.Type() != src.Type() {
		return false
	}
	dst.Elem().Set(src.Elem())
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return true
}

// Patch implements client.Writer: merge patch, JSON patch, and strategic
// merge patch for built-in kinds, applied to the object at the store's head,
// as the apiserver does. Apply patches are refused with ErrApplyNotSupported.
func (c *Client) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.patch(ctx, obj, patch, false, (&client.PatchOptions{}).ApplyOptions(opts).DryRun)
}

func (c *Client) patch(ctx context.Context, obj client.Object, patch client.Patch, status bool, dryRunOpt []string) error {
	k, err := c.cluster.Store.kinds.forObject(obj)
	if err != nil {
		return err
	}
	if patch.Type() == types.ApplyPatchType || patch.Type() == types.ApplyCBORPatchType {
		return ErrApplyNotSupported
	}
	if isBindingKind(k) {
		return createOnly(k, "patch")
	}
	dry, err := dryRun(dryRunOpt, "PatchOptions")
	if err != nil {
		return err
	}
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	c.enter(ctx)
	head := c.cluster.Store.rev
	op := model.OpPatch
	if status {
		op = model.OpPatchStatus
	}
	var ch *Change
	var stored, spare client.Object
	patched, err := c.applyPatch(k, obj, patch.Type(), data)
	if err == nil {
		c.storeWrite(dry, func() {
			if status {
				ch, stored, err = c.cluster.Store.UpdateStatus(patched)
			} else {
				ch, stored, spare, err = c.cluster.Store.update(patched, !c.dropAnswers)
			}
		})
	}
	return c.writeEventSpare(op, k, obj, head, ch, stored, spare, err, dry)
}

func (c *Client) applyPatch(k *kindInfo, obj client.Object, pt types.PatchType, data []byte) (client.Object, error) {
	cur, ok := c.cluster.Store.peek(k, objectKey(k, obj.GetNamespace(), obj.GetName()))
	if !ok {
		return nil, apierrors.NewNotFound(k.gr, obj.GetName())
	}
	curJSON, err := json.Marshal(cur)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var out []byte
	switch pt {
	case types.MergePatchType:
		out, err = jsonpatch.MergePatch(curJSON, data)
	case types.JSONPatchType:
		var p jsonpatch.Patch
		if p, err = jsonpatch.DecodePatch(data); err == nil {
			out, err = p.Apply(curJSON)
		}
	case types.StrategicMergePatchType:
		if !k.isBuiltin() {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", k.gr, obj.GetName(),
				fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json (strategic merge patch is for built-in kinds only; %s is a custom resource)", k.gvk.Kind), 0, false)
		}
		out, err = strategicpatch.StrategicMergePatch(curJSON, data, k.newObject())
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("patch type %q is not supported (use merge, JSON or strategic merge patch)", pt))
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("applying %s patch to %s %s: %v", pt, k.gvk.Kind, obj.GetName(), err))
	}
	res := k.newObject()
	if err := json.Unmarshal(out, res); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the patched %s %s does not decode: %v", k.gvk.Kind, obj.GetName(), err))
	}
	return res, nil
}

// Apply implements client.Writer; server-side apply is not modelled.
func (c *Client) Apply(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error {
	return ErrApplyNotSupported
}

// Delete implements client.Writer.
func (c *Client) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	k, err := c.cluster.Store.kinds.forObject(obj)
	if err != nil {
		return err
	}
	if isBindingKind(k) {
		return createOnly(k, "delete")
	}
	o := (&client.DeleteOptions{}).ApplyOptions(opts)
	dry, err := dryRun(o.DryRun, "DeleteOptions")
	if err != nil {
		return err
	}
	c.enter(ctx)
	return c.delete(k, obj.GetNamespace(), obj.GetName(), o, "", dry)
}

func (c *Client) delete(k *kindInfo, namespace, name string, o *client.DeleteOptions, detail string, dry bool) error {
	head := c.cluster.Store.rev
	var ch *Change
	var err error
	c.storeWrite(dry, func() {
		ch, err = c.cluster.Store.Delete(k, namespace, name, DeleteOptions{Preconditions: o.Preconditions, PropagationPolicy: o.PropagationPolicy, GracePeriodSeconds: o.GracePeriodSeconds})
	})
	if dry {
		detail = strings.TrimPrefix(detail+" dryRun", " ")
	}
	e := model.Event{Op: model.OpDelete, Kind: k.gvk.Kind, Namespace: namespace, Name: name, HeadRev: head, Err: errString(err), Detail: detail}
	if !k.namespaced {
		e.Namespace = ""
	}
	if ch != nil && !dry {
		e.Rev, e.Change, e.Object = ch.Rev, ch.Type, ch.Object
	} else if err == nil {
		if cur, ok := c.cluster.Store.peek(k, objectKey(k, namespace, name)); ok {
			e.Rev = revOf(cur) // already being deleted: nothing changed
		}
	}
	c.record(e)
	return err
}

// DeleteAllOf implements client.Writer: it deletes every object of the kind
// matching the options at the store's head, one recorded delete each.
func (c *Client) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	k, err := c.cluster.Store.kinds.forObject(obj)
	if err != nil {
		return err
	}
	if isBindingKind(k) {
		return createOnly(k, "deletecollection")
	}
	o := (&client.DeleteAllOfOptions{}).ApplyOptions(opts)
	if k.namespaced && o.Namespace == "" {
		return apierrors.NewBadRequest("DeleteAllOf of a namespaced kind needs client.InNamespace")
	}
	dry, err := dryRun(o.DryRun, "DeleteOptions")
	if err != nil {
		return err
	}
	c.enter(ctx)
	objs, err := c.cluster.Store.list(k, &ListOptions{Namespace: o.Namespace, Labels: o.LabelSelector, Fields: o.FieldSelector})
	if err != nil {
		c.record(model.Event{Op: model.OpDeleteAllOf, Kind: k.gvk.Kind, Namespace: o.Namespace, Err: errString(err)})
		return err
	}
	for _, obj := range objs {
		if err := c.delete(k, obj.GetNamespace(), obj.GetName(), &o.DeleteOptions, "DeleteAllOf", dry); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// Status implements client.StatusClient.
func (c *Client) Status() client.SubResourceWriter { return &statusClient{c} }

// SubResource implements client.SubResourceClientConstructor; only "status"
// exists in the simulated apiserver.
func (c *Client) SubResource(sub string) client.SubResourceClient {
	if sub != "status" {
		return unsupportedSubResource(sub)
	}
	return &statusClient{c}
}

type statusClient struct{ c *Client }

func (s *statusClient) Get(ctx context.Context, obj client.Object, sub client.Object, _ ...client.SubResourceGetOption) error {
	return fmt.Errorf("opcheck: Get of the status subresource into a separate object is not supported; use client.Get")
}

func (s *statusClient) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return apierrors.NewMethodNotSupported(schema.GroupResource{Resource: "status"}, "create")
}

func (s *statusClient) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.c.update(ctx, obj, true, (&client.SubResourceUpdateOptions{}).ApplyOptions(opts).DryRun)
}

func (s *statusClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.c.patch(ctx, obj, patch, true, (&client.SubResourcePatchOptions{}).ApplyOptions(opts).DryRun)
}

func (s *statusClient) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return ErrApplyNotSupported
}

type unsupportedSubResource string

func (u unsupportedSubResource) err() error {
	return fmt.Errorf("opcheck: subresource %q is not modelled (only status is); see docs/fidelity.md", string(u))
}
func (u unsupportedSubResource) Get(context.Context, client.Object, client.Object, ...client.SubResourceGetOption) error {
	return u.err()
}
func (u unsupportedSubResource) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return u.err()
}
func (u unsupportedSubResource) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	return u.err()
}
func (u unsupportedSubResource) Patch(context.Context, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
	return u.err()
}
func (u unsupportedSubResource) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return u.err()
}

// finalizeNamespace calls the finalize subresource and records it as an
// Update of the Namespace with Detail "finalize".
func (c *Client) finalizeNamespace(ctx context.Context, name string) {
	c.enter(ctx)
	head := c.cluster.Store.rev
	ch, err := c.cluster.Store.FinalizeNamespace(name)
	e := model.Event{Op: model.OpUpdate, Kind: "Namespace", Name: name, HeadRev: head, Err: errString(err), Detail: "finalize"}
	if ch != nil {
		e.Rev, e.Change, e.Object = ch.Rev, ch.Type, ch.Object
	}
	c.record(e)
}
