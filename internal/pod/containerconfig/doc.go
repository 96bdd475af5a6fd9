// Package containerconfig builds the CRI configs berth sends for a pod:
// the PodSandboxConfig (Sandbox) and each container's ContainerConfig
// (Container), as upstream's kuberuntime generates them. It only builds:
// kuberuntime reads what needs the world (resolv.conf, the image's user,
// volume mounts, the environment), passes the values in, sends the configs
// through the CRI and records the events these builders return.
//
// It is pure, with table tests: no files, no clock, no RPC, no logging
// (internal/testkit/archtest holds that line). Every function may be called
// concurrently; nothing keeps state.
//
//	container_config.go Container: the ContainerConfig of one container
//	                    (labels, annotations, log path, $(VAR) in command
//	                    and args, mounts, Linux resources and security;
//	                    an ephemeral container with a target joins the
//	                    target's PID namespace, NamespaceMode_TARGET)
//	sandbox_config.go   Sandbox: the PodSandboxConfig (hostname and FQDN,
//	                    port mappings, log directory, DNS, Linux config);
//	                    HostnameAndDomain, also for the /etc/hosts file
//	dns.go              ParseResolvConf (from an io.Reader) and the pod's
//	                    DNS config per dnsPolicy, within resolver limits
//	resources.go        Linux resources: cpu shares and quota, memory,
//	                    OOM score by QoS class, huge pages, pod overhead
//	                    and the pod's totals (the arithmetic is
//	                    internal/podkit/cgroupmath's, shared with
//	                    internal/node/cm); ResourceSettings, OOMGroup
//	memory.go           memory QoS and swap of a container as upstream
//	                    (ContainerMemoryQoS: memory.min/low/high and
//	                    memory.swap.max on cgroup v2, the memory+swap limit
//	                    on v1, over cgroupmath's MemorySettings and
//	                    MemoryHighOf), and SwapBehavior, a container's swap
//	security.go         namespace options (the user namespace: mode NODE,
//	                    or POD with the pod's UserNamespace mapping, which
//	                    Container also sets on every mount so the runtime
//	                    idmaps it), the effective security context,
//	                    seccomp, SELinux, groups, masked and read-only
//	                    paths; the pod's sysctls go to the sandbox as
//	                    given: which it may set is admission's decision
//	                    (admission.Sysctls, over internal/podkit/sysctl)
//	labels.go           the io.kubernetes.* labels and annotations berth
//	                    writes, and reading them back (Managed,
//	                    ReadAnnotations)
//	nonroot.go          runAsNonRoot against the image's user (the caller
//	                    asks the runtime for it when NeedsImageUser)
//	node.go             Node, the node facts and settings the configs
//	                    depend on, built once by NewNode
//	hosts.go            the content of the managed /etc/hosts (ManagedHosts,
//	                    HostNetworkHosts) and MountsEtcHosts; kuberuntime
//	                    writes the file and mounts it
//
// upstream_test.go pins the tables copied from upstream (masked and
// read-only paths, OOM score numbers, the node-critical class) to
// upstream's source (internal/testkit/upstreamsrc); cgroupmath pins the CPU
// numbers, the cgroup file names and the swap behaviours.
//
//	env.go              Env: the container's environment as upstream builds
//	                    it (service variables, envFrom, env with valueFrom,
//	                    $(VAR) expansion) from objects the caller fetched
//	                    (podutil.EnvReferences names them)
//	envservices.go      service variables and fieldRef values
//
// kuberuntime's env.go fetches what the environment reads (configMaps,
// secrets, services, the node's allocatable) and calls Env.
package containerconfig
