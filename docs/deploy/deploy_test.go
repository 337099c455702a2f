package deploy

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// decodeStrict decodes YAML as the apiserver's strict field validation
// does: field names match case-sensitively, and an unknown or duplicate
// field is an error.
func decodeStrict(doc []byte, into any) error {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(js, into, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return fmt.Errorf("strict decoding: %v", strict)
	}
	return nil
}

// documents splits a multi-document YAML file.
func documents(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

func stripComments(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// jobs decodes nightly-job.yaml strictly: every field must be one the
// Kubernetes types know, so a typo (completionmode, parallelsim) fails.
func jobs(t *testing.T) (shards, merge *batchv1.Job) {
	t.Helper()
	for i, doc := range documents(t, "nightly-job.yaml") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("document %d: %v", i+1, err)
		}
		switch meta.Kind {
		case "Job":
			var j batchv1.Job
			if err := decodeStrict(doc, &j); err != nil {
				t.Fatalf("document %d (Job): %v", i+1, err)
			}
			if j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion {
				if shards != nil {
					t.Fatalf("two Indexed Jobs: %s and %s", shards.Name, j.Name)
				}
				shards = &j
			} else {
				merge = &j
			}
		case "PersistentVolumeClaim":
			var pvc corev1.PersistentVolumeClaim
			if err := decodeStrict(doc, &pvc); err != nil {
				t.Fatalf("document %d (PersistentVolumeClaim): %v", i+1, err)
			}
		default:
			t.Fatalf("document %d: unexpected kind %q", i+1, meta.Kind)
		}
	}
	if shards == nil || merge == nil {
		t.Fatalf("want an Indexed Job of shards and a merge Job, got shards=%v merge=%v", shards != nil, merge != nil)
	}
	return shards, merge
}

func script(c corev1.Container) string {
	return strings.Join(append(append([]string{}, c.Command...), c.Args...), " ")
}

func TestNightlyJobShards(t *testing.T) {
	shards, merge := jobs(t)
	s := shards.Spec
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism || *s.Completions < 2 {
		t.Fatalf("completions %v, parallelism %v: want equal, at least 2", s.Completions, s.Parallelism)
	}
	n := *s.Completions
	if len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(s.Template.Spec.Containers))
	}
	c := s.Template.Spec.Containers[0]
	cmd := script(c)
	for _, want := range []string{"explore check", "-strategy exhaustive", "-json", "-shard", "JOB_COMPLETION_INDEX", fmt.Sprintf("/%d", n), "-out /results/shard-${JOB_COMPLETION_INDEX}", "> /results/shard-${JOB_COMPLETION_INDEX}.json"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("shard command %q lacks %q", cmd, want)
		}
	}
	// -shard names the index and the same N as completions.
	if !regexp.MustCompile(fmt.Sprintf(`-shard "?\$(\{JOB_COMPLETION_INDEX\}|\(JOB_COMPLETION_INDEX\))/%d\b`, n)).MatchString(cmd) {
		t.Errorf("shard command %q: want -shard <JOB_COMPLETION_INDEX>/%d", cmd, n)
	}
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q: want Never (a retried shard is a new pod)", s.Template.Spec.RestartPolicy)
	}
	mountsResults := func(c corev1.Container) bool {
		for _, m := range c.VolumeMounts {
			if m.MountPath == "/results" {
				return true
			}
		}
		return false
	}
	if !mountsResults(c) {
		t.Errorf("shard container does not mount /results")
	}
	mc := merge.Spec.Template.Spec.Containers[0]
	if m := script(mc); !strings.Contains(m, "explore merge") || !strings.Contains(m, "/results/*.json") || !strings.Contains(m, fmt.Sprintf("-shards %d", n)) {
		t.Errorf("merge command %q: want explore merge -shards %d /results/*.json", m, n)
	}
	if !mountsResults(mc) {
		t.Errorf("merge container does not mount /results")
	}
	// Both mount the same claim.
	claim := func(j *batchv1.Job) string {
		for _, v := range j.Spec.Template.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				return v.PersistentVolumeClaim.ClaimName
			}
		}
		return ""
	}
	if a, b := claim(shards), claim(merge); a == "" || a != b {
		t.Errorf("shards use claim %q, merge %q: want the same shared volume", a, b)
	}
}

// The strict decoder rejects a misspelt field: the test above would catch
// a typo in the file.
func TestStrictDecodeRejectsTypos(t *testing.T) {
	for _, field := range []string{"completionmode: Indexed", "parallelsim: 4"} {
		var j batchv1.Job
		bad := []byte("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  " + field + "\n")
		if err := decodeStrict(bad, &j); err == nil {
			t.Errorf("decodeStrict accepted spec.%s", field)
		}
	}
}

func TestNightlyWorkflow(t *testing.T) {
	data, err := os.ReadFile("nightly-workflow.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var wf map[string]any
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	jobs, _ := wf["jobs"].(map[string]any)
	shard, _ := jobs["shard"].(map[string]any)
	merge, _ := jobs["merge"].(map[string]any)
	if shard == nil || merge == nil {
		t.Fatalf("want jobs shard and merge, got %v", keys(jobs))
	}
	strategy, _ := shard["strategy"].(map[string]any)
	matrix, _ := strategy["matrix"].(map[string]any)
	list, _ := matrix["shard"].([]any)
	env, _ := wf["env"].(map[string]any)
	if len(list) < 2 || fmt.Sprint(env["SHARDS"]) != fmt.Sprint(len(list)) {
		t.Fatalf("matrix shard %v, env SHARDS %v: want at least 2 shards, and SHARDS equal to their number", list, env["SHARDS"])
	}
	for i, v := range list {
		if fmt.Sprint(v) != fmt.Sprint(i) {
			t.Errorf("matrix shard %v: want 0..%d", list, len(list)-1)
			break
		}
	}
	if needs := fmt.Sprint(merge["needs"]); needs != "shard" && needs != "[shard]" {
		t.Errorf("merge needs %v: want shard", merge["needs"])
	}
	run := func(job map[string]any) string {
		var b bytes.Buffer
		steps, _ := job["steps"].([]any)
		for _, s := range steps {
			if m, ok := s.(map[string]any); ok {
				fmt.Fprintln(&b, m["run"])
			}
		}
		return b.String()
	}
	if r := run(shard); !strings.Contains(r, "-shard ${{ matrix.shard }}/$SHARDS") || !strings.Contains(r, "-json") {
		t.Errorf("shard steps %q: want explore check -json -shard ${{ matrix.shard }}/$SHARDS", r)
	}
	if r := run(merge); !strings.Contains(r, "explore merge -shards $SHARDS") {
		t.Errorf("merge steps %q: want explore merge -shards $SHARDS", r)
	}
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
