// Package prober runs the liveness, readiness and startup probes of the
// pods berth runs, as the upstream kubelet's prober does.
//
// It owns one worker goroutine per (pod, container, probe type), started
// and stopped by the Prober's Run goroutine from the set of pods the pod
// syncer hands it (AddPod, StopLivenessAndStartup, RemovePod). A worker
// reads the container's current instance from the pod status store, probes
// it on its period with the injected clock and records a result per
// container instance: results are reset when the container ID changes.
// Each result change is announced on Updates so that the sync loop wakes the
// pod's worker; the pod syncer then reads Snapshot (verdicts by container
// ID for the planner, readiness and startup by name for the status).
//
//	types.go    ProbeType, Result, the handler outcome
//	decide.go   pure decisions: what a tick does, thresholds
//	exec.go     exec handler over CRI ExecSync
//	http.go     httpGet handler and the classification of responses (the
//	            request and the port come from internal/podkit/httpget, shared
//	            with lifecycle hooks; TCP probes resolve their port there)
//	tcp.go      tcpSocket handler
//	grpc.go     grpc handler (grpc.health.v1 Check)
//	runner.go   handler dispatch, retries, Unhealthy/ProbeWarning events
//	worker.go   the per-container worker loop
//	prober.go   Prober: Config, New, Run, AddPod, RemovePod (a terminated
//	            pod), Forget (a pod that is gone: internal/pod/podgone),
//	            Snapshot, Updates
//	metrics.go  prober_probe_total, prober_probe_duration_seconds
package prober
