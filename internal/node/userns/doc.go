// Package userns gives pods that ask for a user namespace
// (spec.hostUsers: false) their own range of host user and group IDs, as
// upstream's pkg/kubelet/userns does, and refuses them, with upstream's
// message, when the runtime handler does not support user namespaces.
//
//	allocator.go    Allocator: non-overlapping per-pod mappings of
//	                idsPerPod IDs cut from the kubelet's range, upstream's
//	                checks of that range, a random-start scan for a free
//	                slot (pure; randomness injected)
//	file.go         the mappings file in the pod's directory
//	                (PodsDir/<uid>/userns), in upstream's JSON format:
//	                Encode and Decode (pure)
//	subids.go       getsubids output and /etc/subuid, /etc/subgid (pure
//	                parsers)
//	kubeletrange.go KubeletRange: the "kubelet" user's subordinate IDs
//	                (getsubids, or the files when it is not installed),
//	                else the default range (idsPerPod up to 2^32)
//	store.go        reading, writing and removing mappings files without
//	                following a symlink (O_NOFOLLOW relative to the pod
//	                directory's descriptor), atomically and durably
//	support.go      WantsUserNamespace, HandlerSupports (the runtime's
//	                Status runtime_handlers[].features.user_namespaces)
//	manager.go      Manager: PodMapping (kuberuntime asks it for every
//	                sandbox and container config), Release (podsync, once
//	                the pod has terminated), Forget and HeldPods (the
//	                route by which per-pod state ends,
//	                internal/pod/podgone: a pod gone, the mappings held,
//	                whose orphans housekeeping finds); New rebuilds the
//	                allocations from the pod directories
//
// The CRI side (NamespaceOption.UsernsOptions in mode POD, and the same
// mappings on every mount so the runtime idmaps volumes and the kubelet's
// files) is built by containerconfig from the Mapping.
package userns
