// Package timeline records, for each pod, the stages of its start: when
// each began and ended and how it ended, for the kubelet API's
// GET /pods/{namespace}/{name}/timeline (internal/serve/server) and the
// question "is it pulling or is it stuck, and where did the time go?"
// (docs/why-waiting.md).
//
// The stages, each named by its constant and recorded by the component
// that performs the step, through an interface that component declares
// (nil records nothing):
//
//	admitted         admission (internal/pod/admission): the handlers' verdict
//	volume           each volume by name, until it is set up once
//	                 (internal/volumes/volume); a volume that fails is
//	                 recorded at every failed attempt
//	sandbox          RunPodSandbox (internal/pod/kuberuntime). The runtime
//	                 sets up the pod's network (CNI) inside this call and
//	                 tells berth nothing of its parts: there is no network
//	                 stage, rather than a guessed one
//	image            each image a container (or image volume) uses: a pull,
//	                 with the image's bytes, or "already present"
//	container-start  each container's CreateContainer and StartContainer
//	init-container   each init container's run, from its start to its exit
//	                 (by the runtime's clock, from the pod's statuses)
//	probe            the first startup or readiness probe success of each
//	                 container that has one (target "<container> startup"):
//	                 from the container's start to the first status that
//	                 shows it, the status generated in the sync the
//	                 probe's result wakes
//	status-written   from the first generated status with phase Running to
//	                 its write to the API server (cluster mode)
//
// A stage begun and not ended is "running": a pull in progress shows as
// one. Retries are new entries, failed ones keep their message; nothing is
// overwritten. A pod keeps at most Config.MaxEntries entries, the oldest
// dropped first and counted (Timeline.Dropped).
//
// The Recorder is an owner of per-pod state (STYLE rule 20): the wiring
// registers its Forget with the pod-gone route (internal/pod/podgone),
// the only way a pod's timeline ends. It sees the pods berth has run since
// it started: a pod admitted before a restart of berth starts again at
// its admission after it.
//
//	recorder.go  Recorder: Begin, ObserveStatus, StatusWritten, Get, Forget
//	status.go    what a pod status tells: init container runs, probe
//	             successes, phase Running
//	types.go     Timeline and Stage, the endpoint's JSON
package timeline
