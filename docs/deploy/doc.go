// Package deploy holds no code: its test proves that the deployment
// examples next to it (nightly-job.yaml, nightly-workflow.yaml, described
// in docs/scale-out.md) decode strictly and shard the way the explore CLI
// expects.
package deploy
