// Package podstatus owns the v1.PodStatus berth reports for its pods.
//
//   - Generate (generate.go and its helpers: containers.go, phase.go,
//     conditions.go, resources.go, ips.go) is a pure function from a snapshot
//     (the pod, its runtime state, the previous status, start failures,
//     probe results, actuated resources, resize conditions, host IPs and
//     the time) to the pod's status. It
//     follows the upstream kubelet's generateAPIPodStatus: phase, kubelet
//     conditions with preserved transition times, container statuses
//     (ephemeral ones in ephemeral.go: never started/ready, never
//     restarted, outside the phase and conditions),
//     pod and host IPs, start time and QoS class (podutil.QOSClass, kept
//     once recorded). Where a pod is in a
//     RestartAllContainers restart comes from the sync's plan
//     (podplan.RestartAll): it drives the AllContainersRestarting
//     condition and the statuses of the containers the reset removed
//     (restart counts never go backwards).
//   - PodReadyToStartContainers (waiting.go) is the planner's sandbox
//     verdict (podplan.DecideSandbox) with upstream's reason and message;
//     the Input's Wait (what stopped the last sync before the sandbox: a
//     volume, the claims, the sandbox or its network) follows upstream's
//     message, on one line and bounded (docs/why-waiting.md).
//   - Resources (resources.go), as upstream with InPlacePodVerticalScaling
//     and InPlacePodLevelResourcesVerticalScaling: the pod Generate gets
//     is the allocated pod, so a container status's allocatedResources
//     are its spec's requests and its resources the spec's, overridden
//     for a running container by what the runtime reports
//     (runtimestate.Container.Resources), completed from the actuated
//     resources the Input carries and from the previous status of the
//     same container. The pod's allocatedResources and resources are its
//     requests and effective allocated resources; upstream reads a running
//     pod's resources from its pod cgroup, berth does not. The resize
//     conditions (PodResizePending, PodResizeInProgress) are owned
//     elsewhere and come in the Input; Generate only places them, and
//     drops them once the pod is terminal.
//   - A Termination (termination.go) in the Input is why berth itself ends
//     the pod (a graceful node shutdown): upstream's phase Failed, reason,
//     message and DisruptionTarget condition. DeadlineExceeded is the one
//     of a pod past its activeDeadlineSeconds (podplan.Deadline).
//   - NeedsReadinessReconcile (conditions.go) tells whether an API-side
//     change to a readiness gate's condition calls for a new sync.
//   - Store (store.go) holds the latest generated status of every pod on
//     the node and refuses to move a terminal phase backwards; a pod's
//     status ends with the pod (Forget, told by the route by which
//     per-pod state ends, internal/pod/podgone; HeldPods lets
//     housekeeping find a status no worker's end covered). The status writer
//     (internal/cluster/statussync) patches the API server from it.
//
// The generator does not import grpc, client-go or net/http and takes the
// time as an input.
package podstatus
