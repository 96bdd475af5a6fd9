// Package podresources serves the kubelet's pod resources API
// (k8s.io/kubelet/pkg/apis/podresources v1, and v1alpha1 as upstream still
// registers it) on <root-dir>/pod-resources/kubelet.sock, as upstream
// v1.37's pkg/kubelet/apis/podresources: which CPUs, memory, devices and
// dynamic resources each container of the node's pods holds, and what the
// node can allocate. Monitoring agents (DCGM exporter) and topology-aware
// schedulers read it.
//
// The data comes from the wiring (internal/app/agent) through the small
// interfaces this package declares (Pods, CPUs, Memory, Devices,
// DynamicResources), which it satisfies from the CPU and memory managers,
// the device manager and the DRA manager; this package imports none of
// them (the serve wing may not import node).
//
//	server.go   Config, Server, New and Run: the socket, upstream's rate
//	            limit (100 QPS, burst 10, ResourceExhausted "rejected by
//	            rate limit") and both services
//	v1.go       List, Get and GetAllocatableResources (v1): the pods List
//	            shows (the active ones, or every pod with
//	            KubeletPodResourcesListUseActivePods off), the containers of
//	            a pod (its sidecars, then its containers), Get's error for a
//	            pod that is not there or not active, upstream's wording
//	v1alpha1.go List (v1alpha1): every pod's containers and their devices
//	metrics.go  kubelet_pod_resources_endpoint_* under upstream's names,
//	            help and labels
package podresources
