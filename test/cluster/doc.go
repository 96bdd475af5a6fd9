// Package cluster runs a real Kubernetes control plane on loopback for
// berth's development and tests: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler, built from the tools modules
// (hack/cluster-build.sh, `make cluster-tools`) and found in $BERTH_TOOLS_BIN
// (default <repo>/_output/tools/bin).
//
// Start makes a temporary directory and issues, with crypto/x509, a CA,
// serving certificates, a service-account key pair and client certificates
// for the admin (system:masters), the controller-manager, the scheduler, the
// API server's kubelet client and each node (system:node:<name> in
// system:nodes). The API server runs with --authorization-mode=Node,RBAC and
// the NodeRestriction admission plugin, so a node kubeconfig has exactly the
// rights a real kubelet has. Every connection, etcd's included, is TLS with
// client certificates; every listener is on 127.0.0.1. For node TLS
// bootstrap, BootstrapKubeconfig creates a bootstrap token and the RBAC
// kubeadm creates (kube-apiserver accepts bootstrap tokens; the
// controller-manager signs CSRs with the cluster CA and approves node client
// ones); Options.SigningDuration shortens the certificates it signs and
// Options.VerifyKubelets makes the API server verify kubelets' serving
// certificates. Options.MetricsServer also starts metrics-server (built
// from tools/metrics) behind the API server's aggregation layer, for
// `kubectl top`. StartNetwork runs kube-proxy (iptables mode) and CoreDNS
// as host processes once a node is registered, for Services and cluster
// DNS (root only; Stop removes kube-proxy's rules); see network.go.
// StartStorage runs local-provisioner (built from tools/provisioner) for a
// node, its volumes under VolumesDir, and creates the default StorageClass
// DefaultStorageClass (WaitForFirstConsumer, reclaimPolicy Delete), so that
// claims without a class, a StatefulSet's among them, get a local PV; see
// storage.go.
//
// Files:
//
//	pki.go        the CA and the certificates and keys it issues (pure but for randomness)
//	files.go      every certificate, key and kubeconfig of a cluster, on disk
//	kubeconfig.go kubeconfig files
//	bootstrap.go  the bootstrap token, kubeadm's node bootstrap RBAC, the bootstrap kubeconfig
//	flags.go      the command line of each component (pure)
//	process.go    one child process: process group, log file, stop, log tail
//	cluster.go    Start, Stop, the accessors and the API server restart
//	metricsserver.go metrics-server: its command line, RBAC, Service and APIService, its start
//	network.go    kube-proxy and CoreDNS: command lines, Corefile, the kube-dns Service, start and clean-up
//	storage.go    local-provisioner: its command line, RBAC and the default StorageClass, its start
//	health.go     waiting for a component's health endpoint
//	bindir.go     finding the binaries
//	testing.go    ForTest, the helper Go tests call
//	nodeconfig.go what every berth node of it is configured with: SharedHostEviction
//
// A Cluster is safe for concurrent use; its mutex guards the running
// processes. Stop ends every process it started (by process group) and
// removes the directory.
package cluster
