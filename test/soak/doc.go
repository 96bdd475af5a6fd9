// Package soak runs berth and the upstream kubelet through the same faults
// and churn on one machine, in one run (docs/reliability.md): the same
// containerd, the same control plane (test/cluster), one kubelet after
// the other on a fresh Node each, the CRI reached through criproxy so that
// faults can be injected. Every scenario reports figures (what a kubelet
// left behind, what it restarted or killed, how long it took to recover)
// and the promises it broke; `make soak` prints both kubelets side by side,
// and the short run in `make test` (soak_test.go) holds berth to them.
//
//	config.go   Config: the kubelets, the scenarios' sizes, the runtime restart
//	run.go      Run: the control plane, every scenario for every kubelet, the report
//	report.go   Report and Outcome, the side-by-side table (pure)
//	pods.go     the soak's pods: create, wait Running, delete, their runtime objects
//	host.go     what a kubelet leaves behind: runtime objects, pod directories,
//	            mounts, pod cgroups, CNI leases; resident memory and goroutines
//	churn.go    create -> Running -> delete cycles; nothing left, memory bounded
//	crash.go    the kubelet SIGKILLed during a burst and during a deletion
//	crashvol.go the same on pods with a volume of each kind the kubelet sets up
//	crashresize.go the kubelet SIGKILLed during in-place resizes; cgroups checked
//	runtime.go  containerd restarted under running pods
//	crifault.go the runtime unavailable, hung or slow (criproxy) under running pods
//	apiout.go   the API server stopped under running pods, a container dying meanwhile
//	apistorm.go every API request throttled (429), then failing (500), through apiproxy
//	diskfull.go the kubelet's root filesystem filled under running pods
//	checkpoints.go each checkpoint file torn while the kubelet is stopped
//	measure.go  resident memory, the Node's time not Ready, recovery
package soak
