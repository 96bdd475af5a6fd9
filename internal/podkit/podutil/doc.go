// Package podutil owns the small predicates about a pod that several
// packages need, so each has one home and one name (STYLE rule 13):
//
//	source.go   where a pod came from: the config.source annotation, the
//	            source names, IsStatic, IsMirror
//	kinds.go    IsSidecar (restartable init container), IsTerminal (phase),
//	            FullName (upstream's name_namespace)
//	critical.go IsCritical (upstream's IsCriticalPod: static, mirror or of
//	            system-critical priority), which eviction and the
//	            containers' swap and OOM score ask
//	qos.go      QOSClass, the pod's QoS class computed from its cpu and
//	            memory requests and limits (upstream's ComputePodQOS): the
//	            status generator, the container manager, the CPU and memory
//	            managers, eviction, admission and allocation all ask it
//	requests.go PodRequests, what a pod asks of the node (upstream's
//	            resource helpers over its spec: containers, sidecars, init
//	            containers, pod-level requests, overhead), and HeldRequests,
//	            what an admitted pod holds while a resize is under way (the
//	            status counted too): admission, allocation, eviction, the
//	            container manager and the status generator count with them
//	limits.go   EffectiveLimits, a container's cpu and memory limits with
//	            the pod-level ones as fallback
//	conditions.go  OwnedByKubelet, SharedWithKubelet: which pod conditions
//	            the kubelet writes
//	envrefs.go  EnvReferences, the configMaps and secrets an environment
//	            names
//	desc.go     Desc, how messages name a pod (upstream's format.Pod)
//	restart.go  whether an exited container restarts: the container's
//	            restartPolicyRules, then its restartPolicy, then the pod's
//	            (upstream's ContainerShouldRestart, ContainerRestartRules on)
//	restartall.go  RestartAllContainers: whether an exit triggers it, whether
//	            a pod can do it, whether a status says it is under way
//	logdir.go   LogDir and ContainerLogFile: where a pod's and a container's
//	            logs lie under podLogsDir
//	draextended.go  DRA-backed extended resources: IsDRAExtendedResourceName,
//	            IsDRAExtendedResource (a container's resource the pod's
//	            extended resource claim serves), ExtendedResourceClaimName,
//	            UsesResourceClaims, ContainerUsesResourceClaims and
//	            MapsExtendedResources: the DRA
//	            manager, the device manager, admission and the pod path ask
//	uid.go      ValidateUID, the rule a pod UID passes before it becomes a
//	            path element (pod and log directories); podsource refuses
//	            pods that fail it, housekeeping removes no directory whose
//	            name fails it
//
// It is pure: it imports only the API types and upstream's pure helpers
// (k8s.io/component-helpers), reads nothing and keeps no state. The
// planner (podplan) decides with these predicates and the status generator
// (podstatus) reads the same ones, so the two cannot disagree.
package podutil
