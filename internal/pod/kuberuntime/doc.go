// Package kuberuntime applies pod plans through the CRI and reads runtime
// state back. It owns everything berth says to the container runtime about
// pods: image pulls with their back-off, starting, killing and removing
// containers and sandboxes, and converting CRI listings and statuses into
// runtimestate snapshots. The sandbox and container configs it sends are
// built by the pure package containerconfig from what kuberuntime reads
// (resolv.conf, the image's user, mounts, the environment).
//
// The decisions live elsewhere: podsync computes the pod's plan once with
// podplan.Compute and hands it to Apply, which only performs it. The
// Manager keeps no per-pod state: the pull back-off comes in and goes out
// with each Apply. One operation per file:
//
//	manager.go          Config, New, Manager, Recorder; Observers, the
//	                    metrics hooks and the StageRecorder the applies
//	                    tell the stages of a pod's start (sandbox, images,
//	                    container starts: internal/pod/timeline)
//	events.go           event and waiting reasons, CRI error messages
//	sync.go             Apply: perform a plan in order (ephemeral
//	                    containers first, in the PID namespace of the
//	                    target the plan resolved; then init, then regular)
//	start_pace.go       the slots of new pod starts: only a new sandbox
//	                    waits, the pod seen first goes first, a slot is
//	                    held 3 s at most
//	start_limit.go      how many slots: a pure gradient limiter over the
//	                    latencies of RunPodSandbox and container starts
//	                    (between one and eight a CPU)
//	sandbox_create.go   RunPodSandbox (reads resolv.conf, creates the log
//	                    directory; the config is containerconfig.Sandbox,
//	                    its cgroup_parent the pod's cgroup from
//	                    Config.Cgroups, which is ensured first; the
//	                    pod's user namespace from Config.UserNamespaces,
//	                    internal/node/userns, which refuses hostUsers: false
//	                    where the runtime cannot)
//	hosts.go            writes the managed /etc/hosts file (content from
//	                    containerconfig); containerconfig mounts it
//	container_start.go  pull, check runAsNonRoot against the image's user,
//	                    create and start one container (the config is
//	                    containerconfig.Container)
//	mounts.go           volumeMounts to CRI mounts; a subPath is mounted
//	                    from its bind made by volume/subpath
//	cdi.go              the CDI devices of a container's ResourceClaims (the
//	                    DRA manager's), refused on a runtime that drops them
//	env.go              EnvSource, and fetching what a container's
//	                    environment reads; containerconfig.Env builds it
//	image_pull.go       ensureImage: pull policy, back-off, events, for a
//	                    container's image or an image volume's (imageUse)
//	image_volumes.go    the image volumes a container mounts, pulled before
//	                    it starts and handed to the runtime as image mounts
//	image_limit.go      how many pulls run at once (serializeImagePulls,
//	                    maxParallelImagePulls), across all pods, and how
//	                    many per second (registryPullQPS, registryBurst)
//	pull_auth.go        pull credentials: the pod's pull secrets, then the
//	                    node's credential provider plugins (a
//	                    CredentialProvider, internal/images/credprovider), each
//	                    tried until one works
//	image_backoff.go    the per pod+image pull back-off: upstream's image
//	                    pull numbers over podplan's back-off algorithm
//	image_name.go       image reference validation and default tag
//	kill.go             KillPod and killContainer: grace periods (probe-
//	                    level ones included), preStop inside the grace
//	                    period
//	kill_order.go       termination ordering: sidecars stop after the
//	                    regular containers, in reverse order
//	hooks.go            postStart/preStop handlers: exec (ExecSync),
//	                    httpGet (the request built by internal/podkit/httpget,
//	                    as probes build theirs), sleep
//	remove.go           RemovePod, RemoveContainer, RemoveSandbox (which
//	                    dead containers and sandboxes go is internal/node/gc's
//	                    decision)
//	reset.go            a RestartAllContainers reset: kill and remove the
//	                    plan's containers in order, the sandbox stays
//	list.go, status.go  ListPods and PodStatus (termination messages from
//	                    the file or, FallbackToLogsOnError, the log tail
//	                    read by containerlogs.Tail)
//	container_events.go WatchContainerEvents: the PLEG's event source over
//	                    the CRI GetContainerEvents stream
//	convert.go          CRI values to runtimestate values
//
// upstream_test.go pins the event and waiting reasons and the hook
// response limit to upstream's source (internal/testkit/upstreamsrc).
package kuberuntime
