// Package podplan decides what to do with one pod: Compute(Inputs) Actions.
// It is the heart of SyncPod and it is pure: it reads only its Inputs (the
// pod, the observed runtime state, backoff entries, probe verdicts and the
// time) and performs nothing. internal/kuberuntime applies the Actions.
package podplan
