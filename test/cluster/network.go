package cluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The Service network of the development cluster: kube-proxy (iptables
// mode) and CoreDNS, both as processes on the host rather than pods, as
// the rest of the control plane. StartNetwork starts them once the node
// is registered; Stop stops them and runs `kube-proxy --cleanup`.
//
//   - kube-proxy authenticates as system:kube-proxy, the user the API
//     server's bootstrap policy binds to system:node-proxier (as kubeadm
//     configures it), with --hostname-override the node's name and
//     --cluster-cidr the CNI bridge's range. It is told to leave the host's
//     sysctls alone (conntrack limits and timeouts, route_localnet).
//   - CoreDNS serves cluster.local from the API server (the kubernetes
//     plugin, with a kubeconfig for ClusterDNSUser and the RBAC kubeadm
//     gives its coredns service account) and forwards the rest to the
//     host's resolvers. The kube-dns Service has the cluster IP the kubelet
//     is given as clusterDNS and no selector; an EndpointSlice of ours points
//     it at the node's InternalIP and a free port where CoreDNS listens.
//     kube-proxy's DNAT then takes pods' queries to ClusterDNSIP:53 there.
//     Neither the node IP nor port 53 on the host is taken: the host's own
//     resolver may hold it. (Binding CoreDNS to ClusterDNSIP itself would
//     need that address on an interface of the host, and this machine's
//     kernel has no dummy netdev; the CNI bridge only exists once a pod has
//     started.)
const (
	// ClusterDNSIP is the kube-dns Service's cluster IP, the kubelet's
	// clusterDNS.
	ClusterDNSIP = "10.0.0.10"
	// ClusterDomain is the kubelet's clusterDomain and CoreDNS's zone.
	ClusterDomain = "cluster.local"
	// PodCIDR is the range the CNI bridge network of hack/node-setup.sh
	// gives pods (a test holds the two together): kube-proxy's
	// --cluster-cidr, which tells pod traffic from the rest.
	PodCIDR = "10.88.0.0/16"
	// KubeProxyUser is kube-proxy's user name.
	KubeProxyUser = "system:kube-proxy"
	// ClusterDNSUser is CoreDNS's user name.
	ClusterDNSUser = "system:coredns"
	// dnsManifestFile holds CoreDNS's RBAC, the kube-dns Service and its
	// EndpointSlice.
	dnsManifestFile = "cluster-dns.yaml"
	// cleanupTimeout bounds `kube-proxy --cleanup`.
	cleanupTimeout = 30 * time.Second
)

// The network components, by binary name.
const (
	KubeProxy = "kube-proxy"
	CoreDNS   = "coredns"
)

// NetworkBinaries are the binaries StartNetwork needs beside Binaries
// (hack/cluster-build.sh --network builds them).
func NetworkBinaries() []string { return []string{KubeProxy, CoreDNS} }

// Network is where the Service network runs: the node kube-proxy proxies
// for, and the address and port CoreDNS listens on.
type Network struct {
	NodeName string
	// NodeIP is the node's InternalIP: CoreDNS's address, the kube-dns
	// endpoint.
	NodeIP string
	// DNSPort is CoreDNS's port on NodeIP.
	DNSPort int
}

// KubeProxyArgs is kube-proxy's command line: iptables mode for n's node,
// health and metrics on loopback, and nothing that changes the host's
// sysctls (the zero conntrack values keep the kernel's; no localhost
// NodePorts, which would set route_localnet).
func KubeProxyArgs(l Layout, n Network) []string {
	return []string{
		"--kubeconfig=" + l.Path("kube-proxy.kubeconfig"),
		"--hostname-override=" + n.NodeName,
		"--proxy-mode=iptables",
		"--cluster-cidr=" + PodCIDR,
		"--healthz-bind-address=" + loopback + ":" + strconv.Itoa(l.Ports.KubeProxyHealthz),
		"--metrics-bind-address=" + loopback + ":" + strconv.Itoa(l.Ports.KubeProxyMetrics),
		"--conntrack-max-per-core=0",
		"--conntrack-tcp-timeout-established=0",
		"--conntrack-tcp-timeout-close-wait=0",
		"--iptables-localhost-nodeports=false",
		"--profiling=false",
	}
}

// KubeProxyCleanupArgs is the command line that removes every rule
// kube-proxy adds (iptables, ipvs and nftables alike) and exits.
func KubeProxyCleanupArgs() []string { return []string{"--cleanup"} }

// CoreDNSArgs is CoreDNS's command line.
func CoreDNSArgs(l Layout) []string { return []string{"-conf", l.Path("Corefile")} }

// Corefile is CoreDNS's configuration: kubeadm's default Corefile
// (errors, health, ready, kubernetes, forward, cache, loop, loadbalance)
// served on n.NodeIP:n.DNSPort, with health and readiness on loopback and
// the kubernetes plugin reading the API server through a kubeconfig.
func Corefile(l Layout, n Network) string {
	return fmt.Sprintf(`.:%[1]d {
    bind %[2]s
    errors
    health %[3]s:%[4]d
    ready %[3]s:%[5]d
    kubernetes %[6]s in-addr.arpa ip6.arpa {
        kubeconfig %[7]s
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    forward . /etc/resolv.conf
    cache 30
    loop
    loadbalance
}
`, n.DNSPort, n.NodeIP, loopback, l.Ports.DNSHealth, l.Ports.DNSReady, ClusterDomain, l.Path("coredns.kubeconfig"))
}

// ClusterDNSManifest is what cluster DNS needs in the API: kubeadm's
// system:coredns ClusterRole, bound to ClusterDNSUser; the kube-dns
// Service on ClusterDNSIP, without a selector; and its EndpointSlice,
// n.NodeIP at n.DNSPort.
func ClusterDNSManifest(n Network) string {
	return fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:coredns
rules:
- apiGroups: [""]
  resources: ["endpoints", "services", "pods", "namespaces"]
  verbs: ["list", "watch"]
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["get"]
- apiGroups: ["discovery.k8s.io"]
  resources: ["endpointslices"]
  verbs: ["list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:coredns
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:coredns
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: %[1]s
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels:
    k8s-app: kube-dns
    kubernetes.io/name: CoreDNS
spec:
  clusterIP: %[2]s
  ports:
  - name: dns
    port: 53
    protocol: UDP
    targetPort: %[3]d
  - name: dns-tcp
    port: 53
    protocol: TCP
    targetPort: %[3]d
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kube-dns-host
  namespace: kube-system
  labels:
    kubernetes.io/service-name: kube-dns
    endpointslice.kubernetes.io/managed-by: berth-cluster
addressType: IPv4
ports:
- name: dns
  port: %[3]d
  protocol: UDP
- name: dns-tcp
  port: %[3]d
  protocol: TCP
endpoints:
- addresses: ["%[4]s"]
  conditions:
    ready: true
  nodeName: %[5]s
`, ClusterDNSUser, ClusterDNSIP, n.DNSPort, n.NodeIP, n.NodeName)
}

// StartNetwork starts kube-proxy and CoreDNS for nodeName, which must be
// registered (kube-proxy exits when its node's IPs change, and takes them
// at start), and returns once both are healthy and CoreDNS is ready. It
// needs root: kube-proxy writes the host's iptables.
func (c *Cluster) StartNetwork(ctx context.Context, nodeName string) error {
	if err := CheckBinaries(c.binDir, NetworkBinaries()...); err != nil {
		return err
	}
	nodeIP, err := c.nodeInternalIP(ctx, nodeName)
	if err != nil {
		return err
	}
	port, err := freeDualPort(nodeIP)
	if err != nil {
		return err
	}
	n := Network{NodeName: nodeName, NodeIP: nodeIP, DNSPort: port}
	if err := c.writeNetworkFiles(n); err != nil {
		return err
	}
	if err := c.apply(ctx, dnsManifestFile, ClusterDNSManifest(n)); err != nil {
		return err
	}
	l := c.layout
	plain := &http.Client{Timeout: 5 * time.Second}
	if err := c.startComponent(ctx, KubeProxy, KubeProxyArgs(l, n), plain, httpURL(l.Ports.KubeProxyHealthz)+"/healthz"); err != nil {
		return err
	}
	if err := c.startComponent(ctx, CoreDNS, CoreDNSArgs(l), plain, httpURL(l.Ports.DNSHealth)+"/health"); err != nil {
		return err
	}
	return c.waitServing(ctx, CoreDNS, plain, httpURL(l.Ports.DNSReady)+"/ready")
}

// writeNetworkFiles issues kube-proxy's and CoreDNS's client certificates
// and writes their kubeconfigs and the Corefile.
func (c *Cluster) writeNetworkFiles(n Network) error {
	l := c.layout
	caPEM := c.pki.ca.KeyPair().CertPEM
	for _, id := range []struct{ user, file string }{
		{KubeProxyUser, "kube-proxy.kubeconfig"},
		{ClusterDNSUser, "coredns.kubeconfig"},
	} {
		kp, err := c.pki.ca.Issue(ClientSpec(id.user))
		if err != nil {
			return err
		}
		if err := writeFile(l.Path(id.file), Kubeconfig(l.APIServerURL(), caPEM, id.user, kp)); err != nil {
			return err
		}
	}
	return writeFile(l.Path("Corefile"), []byte(Corefile(l, n)))
}

// nodeInternalIP waits for nodeName to be registered with an InternalIP
// and returns it.
func (c *Cluster) nodeInternalIP(ctx context.Context, nodeName string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		out, err := c.Kubectl(ctx, "get", "node", nodeName, "-o", `jsonpath={.status.addresses[?(@.type=="InternalIP")].address}`)
		if ip := firstIPv4(out); err == nil && ip != "" {
			return ip, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("wait for node %q and its InternalIP: %w", nodeName, ctx.Err())
		case <-tick.C:
		}
	}
}

// firstIPv4 returns the first IPv4 address of the space-separated list s,
// or "".
func firstIPv4(s string) string {
	for _, f := range strings.Fields(s) {
		if ip := net.ParseIP(f); ip != nil && ip.To4() != nil {
			return ip.String()
		}
	}
	return ""
}

// freeDualPort returns a port free for both TCP and UDP on ip, as DNS
// needs.
func freeDualPort(ip string) (int, error) {
	for range 20 {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			return 0, fmt.Errorf("find a free port on %s: %w", ip, err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", net.JoinHostPort(ip, strconv.Itoa(port)))
		l.Close()
		if err == nil {
			u.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("find a port free for TCP and UDP on %s: none in 20 tries", ip)
}

// cleanupNetwork removes what kube-proxy added to the host, when this
// cluster ran it.
func (c *Cluster) cleanupNetwork(ranKubeProxy bool) error {
	if !ranKubeProxy {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(c.binDir, KubeProxy), KubeProxyCleanupArgs()...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("run kube-proxy --cleanup: %w\n%s", err, tail(out, logTailBytes))
	}
	return nil
}

func httpURL(port int) string { return "http://" + loopback + ":" + strconv.Itoa(port) }
