package cluster

import (
	"path/filepath"
	"strconv"
)

// Ports are the loopback ports of one cluster.
type Ports struct {
	EtcdClient        int
	EtcdPeer          int
	APIServer         int
	ControllerManager int
	Scheduler         int
	MetricsServer     int
	// The Service network's (StartNetwork): kube-proxy's health and
	// metrics, CoreDNS's health and readiness, all on loopback.
	KubeProxyHealthz int
	KubeProxyMetrics int
	DNSHealth        int
	DNSReady         int
	// local-provisioner's health (StartStorage), on loopback.
	Provisioner int
}

// Layout is where a cluster keeps its files and listens. Every path derives
// from Dir, so a Layout is a value that pure functions turn into command
// lines.
type Layout struct {
	Dir   string
	Ports Ports
}

// The cluster's fixed network facts.
const (
	// ServiceCIDR is --service-cluster-ip-range.
	ServiceCIDR = "10.0.0.0/24"
	// ServiceIP is the kubernetes Service's cluster IP, the first of ServiceCIDR.
	ServiceIP = "10.0.0.1"
	// ServiceAccountIssuer is --service-account-issuer, as kubeadm sets it.
	ServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"
	loopback             = "127.0.0.1"
)

// Path returns the path of a file of the cluster.
func (l Layout) Path(name string) string { return filepath.Join(l.Dir, name) }

// PKI returns the path of a PKI file: "ca.crt", "apiserver.key", ...
func (l Layout) PKI(name string) string { return filepath.Join(l.Dir, "pki", name) }

// APIServerURL is the API server's address.
func (l Layout) APIServerURL() string { return httpsURL(l.Ports.APIServer) }

// EtcdURL is etcd's client address.
func (l Layout) EtcdURL() string { return httpsURL(l.Ports.EtcdClient) }

func httpsURL(port int) string { return "https://" + loopback + ":" + strconv.Itoa(port) }

// EtcdArgs is etcd's command line: one member, TLS with client
// certificates for clients, plain HTTP for the (unused) peer port.
func EtcdArgs(l Layout) []string {
	peer := "http://" + loopback + ":" + strconv.Itoa(l.Ports.EtcdPeer)
	return []string{
		"--name=berth-dev",
		"--data-dir=" + l.Path("etcd"),
		"--listen-client-urls=" + l.EtcdURL(),
		"--advertise-client-urls=" + l.EtcdURL(),
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=berth-dev=" + peer,
		"--cert-file=" + l.PKI("etcd-server.crt"),
		"--key-file=" + l.PKI("etcd-server.key"),
		"--client-cert-auth=true",
		"--trusted-ca-file=" + l.PKI("ca.crt"),
		// A throwaway cluster: no fsync, much faster on a shared disk.
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}
}

// APIServerArgs is kube-apiserver's command line.
func APIServerArgs(l Layout) []string {
	return []string{
		"--bind-address=" + loopback,
		"--advertise-address=" + loopback,
		"--secure-port=" + strconv.Itoa(l.Ports.APIServer),
		"--tls-cert-file=" + l.PKI("apiserver.crt"),
		"--tls-private-key-file=" + l.PKI("apiserver.key"),
		"--client-ca-file=" + l.PKI("ca.crt"),
		"--etcd-servers=" + l.EtcdURL(),
		"--etcd-cafile=" + l.PKI("ca.crt"),
		"--etcd-certfile=" + l.PKI("apiserver-etcd-client.crt"),
		"--etcd-keyfile=" + l.PKI("apiserver-etcd-client.key"),
		"--authorization-mode=Node,RBAC",
		// Bootstrap tokens (BootstrapKubeconfig), as kubeadm enables them.
		"--enable-bootstrap-token-auth=true",
		"--enable-admission-plugins=NodeRestriction",
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--service-account-issuer=" + ServiceAccountIssuer,
		"--service-account-key-file=" + l.PKI("sa.pub"),
		"--service-account-signing-key-file=" + l.PKI("sa.key"),
		"--kubelet-client-certificate=" + l.PKI("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + l.PKI("apiserver-kubelet-client.key"),
		// berth serves the kubelet API with a self-signed certificate unless
		// it bootstraps one (Options.VerifyKubelets adds
		// --kubelet-certificate-authority). Node IPs first, as kubeadm:
		// the nodes' host names do not resolve on the test machine.
		"--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
		"--allow-privileged=true",
		"--requestheader-client-ca-file=" + l.PKI("front-proxy-ca.crt"),
		"--requestheader-allowed-names=" + frontProxyUser,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + l.PKI("front-proxy-client.crt"),
		"--proxy-client-key-file=" + l.PKI("front-proxy-client.key"),
		// The kubernetes Service cannot have a loopback endpoint (Endpoints
		// validation refuses 127.0.0.0/8), so do not try to keep one.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	}
}

// ControllerManagerArgs is kube-controller-manager's command line: every
// controller that is on by default (none of v1.37's needs a cloud), one
// identity per controller, the cluster CA as the CSR signer.
func ControllerManagerArgs(l Layout) []string {
	return append(servingArgs(l, "controller-manager", l.Ports.ControllerManager),
		"--controllers=*",
		"--use-service-account-credentials=true",
		"--cluster-signing-cert-file="+l.PKI("ca.crt"),
		"--cluster-signing-key-file="+l.PKI("ca.key"),
		"--root-ca-file="+l.PKI("ca.crt"),
		"--service-account-private-key-file="+l.PKI("sa.key"),
		"--service-cluster-ip-range="+ServiceCIDR,
		"--leader-elect=false",
		"--profiling=false",
	)
}

// SchedulerArgs is kube-scheduler's command line.
func SchedulerArgs(l Layout) []string {
	return append(servingArgs(l, "scheduler", l.Ports.Scheduler),
		"--leader-elect=false",
		"--profiling=false",
	)
}

// servingArgs are the flags kube-controller-manager and kube-scheduler
// share: the component's kubeconfig for everything, its serving
// certificate on a loopback port, and the cluster CA for clients.
func servingArgs(l Layout, name string, port int) []string {
	kubeconfig := l.Path(name + ".kubeconfig")
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=" + loopback,
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + l.PKI(name+"-serving.crt"),
		"--tls-private-key-file=" + l.PKI(name+"-serving.key"),
		"--client-ca-file=" + l.PKI("ca.crt"),
	}
}
