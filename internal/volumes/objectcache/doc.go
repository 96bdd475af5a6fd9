// Package objectcache owns reading configMaps, secrets and services for
// the node. It is the one source of configMaps and secrets: the volume manager (configMap,
// secret and projected volumes), the container environment (configMapKeyRef,
// secretKeyRef, envFrom) and image pull secrets all read them through
// Objects, so the strategy below applies to all three.
//
// The strategy is configMapAndSecretChangeDetectionStrategy, as upstream's
// kubelet (pkg/kubelet/util/manager, configmap, secret):
//
//	Watch (default)  one informer per object a registered pod references:
//	                 a list-watch of its namespace with the field selector
//	                 metadata.name=<name>, which is what the node authorizer
//	                 lets a node read. It starts at the first reference,
//	                 stops at the last, and stops early once the object is
//	                 immutable (the last object stays served). A read waits
//	                 for the first list within the caller's context and one
//	                 second, then fails, as upstream.
//	Cache            a GET at most every TTL per object: the Node's
//	                 node.alpha.kubernetes.io/ttl annotation in seconds,
//	                 else one minute (upstream's default). A pod's first
//	                 registration makes its objects be fetched again; a
//	                 failed GET keeps serving the cached object.
//	Get              a GET on every read; registration does nothing.
//
// With Watch and Cache, an object no registered pod references is not
// served (an error, as upstream's "not registered"); with Get every object
// is. Not found is an error for which apierrors.IsNotFound is true, which
// callers turn into an empty volume source or a skipped optional reference.
// In standalone mode (no client) every read fails.
//
// Registration (one place): podsync.SyncPod registers the pod before it
// sets up volumes and starts containers, on every sync (a changed spec
// replaces the pod's references); podsync.SyncTerminatedPod unregisters it
// once its volumes are torn down; Forget, which the route by which
// per-pod state ends (internal/pod/podgone) calls for a pod that is gone,
// unregisters whatever is left. That is where upstream does it (SyncPod,
// SyncTerminatedPod), and it means an object is watched exactly while a pod
// that may read it has not terminated.
//
// Upstream also stops the watch of an object not read for five resync
// periods and restarts it on the next read; berth does not: a referenced
// object stays watched while its pod lives.
//
// Files:
//
//	refs.go     ConfigMapNames, SecretNames: what a pod references (pure)
//	objects.go  Config, New, Objects: the registry of pods and the reads
//	kind.go     configMaps and secrets for the stores; the Get strategy
//	watch.go    the Watch strategy: per-object informers, owned by Run
//	ttl.go      the Cache strategy and its TTL
//	services.go the informer of every Service (the environment's service
//	            links), run by Run, and the node's allocatable: with the
//	            reads above, the kuberuntime.EnvSource
//
// Objects hold secret data: nothing here logs an object or its content,
// only kinds and names.
package objectcache
