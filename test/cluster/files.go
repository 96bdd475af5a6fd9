package cluster

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
)

// The identities of the control plane's own clients.
const (
	AdminUser             = "berth-admin"
	ControllerManagerUser = "system:kube-controller-manager"
	SchedulerUser         = "system:kube-scheduler"
	apiserverKubeletUser  = "kube-apiserver-kubelet-client"
	apiserverEtcdUser     = "kube-apiserver-etcd-client"
	frontProxyUser        = "front-proxy-client"
	mastersGroup          = "system:masters"
)

// pki is what writePKI issued that the Cluster keeps using.
type pki struct {
	ca         *CA
	admin      KeyPair
	etcdClient KeyPair
}

// writePKI issues every certificate and key of a cluster and writes them,
// with the admin, controller-manager and scheduler kubeconfigs, under l.Dir.
// The file names are those flags.go refers to.
func writePKI(rand io.Reader, ca *CA, l Layout) (pki, error) {
	if err := os.MkdirAll(l.PKI(""), 0o700); err != nil {
		return pki{}, fmt.Errorf("make PKI directory: %w", err)
	}
	if err := writePair(l, "ca", ca.KeyPair()); err != nil {
		return pki{}, err
	}
	issued := map[string]CertSpec{
		"apiserver":                  APIServerServingSpec(net.ParseIP(ServiceIP)),
		"etcd-server":                LoopbackServingSpec("etcd"),
		"controller-manager-serving": LoopbackServingSpec("kube-controller-manager"),
		"scheduler-serving":          LoopbackServingSpec("kube-scheduler"),
		"apiserver-etcd-client":      ClientSpec(apiserverEtcdUser),
		"apiserver-kubelet-client":   ClientSpec(apiserverKubeletUser, mastersGroup),
		"admin":                      ClientSpec(AdminUser, mastersGroup),
		"controller-manager":         ClientSpec(ControllerManagerUser),
		"scheduler":                  ClientSpec(SchedulerUser),
	}
	pairs := make(map[string]KeyPair, len(issued))
	for name, spec := range issued {
		kp, err := ca.Issue(spec)
		if err != nil {
			return pki{}, err
		}
		if err := writePair(l, name, kp); err != nil {
			return pki{}, err
		}
		pairs[name] = kp
	}
	// The front proxy's own CA, as kubeadm does: the API server's
	// aggregator presents front-proxy-client to extension API servers, and
	// the controller-manager and scheduler read the CA from the
	// extension-apiserver-authentication ConfigMap.
	frontCA, err := NewCA(rand, ca.now, "berth-dev-front-proxy-ca")
	if err != nil {
		return pki{}, err
	}
	frontClient, err := frontCA.Issue(ClientSpec(frontProxyUser))
	if err != nil {
		return pki{}, err
	}
	if err := writePair(l, "front-proxy-ca", frontCA.KeyPair()); err != nil {
		return pki{}, err
	}
	if err := writePair(l, "front-proxy-client", frontClient); err != nil {
		return pki{}, err
	}
	sa, saPub, err := NewServiceAccountKey(rand)
	if err != nil {
		return pki{}, err
	}
	if err := writeFile(l.PKI("sa.key"), sa); err != nil {
		return pki{}, err
	}
	if err := writeFile(l.PKI("sa.pub"), saPub); err != nil {
		return pki{}, err
	}
	caPEM := ca.KeyPair().CertPEM
	for file, user := range map[string]struct {
		name string
		pair string
	}{
		"admin.kubeconfig":              {AdminUser, "admin"},
		"controller-manager.kubeconfig": {ControllerManagerUser, "controller-manager"},
		"scheduler.kubeconfig":          {SchedulerUser, "scheduler"},
	} {
		kc := Kubeconfig(l.APIServerURL(), caPEM, user.name, pairs[user.pair])
		if err := writeFile(l.Path(file), kc); err != nil {
			return pki{}, err
		}
	}
	return pki{ca: ca, admin: pairs["admin"], etcdClient: pairs["apiserver-etcd-client"]}, nil
}

// writeNodeKubeconfig issues a kubelet client certificate for nodeName and
// writes its kubeconfig, returning the kubeconfig's path.
func writeNodeKubeconfig(ca *CA, l Layout, nodeName string) (string, error) {
	kp, err := ca.Issue(NodeClientSpec(nodeName))
	if err != nil {
		return "", err
	}
	if err := writePair(l, "node-"+nodeName, kp); err != nil {
		return "", err
	}
	path := l.Path("node-" + nodeName + ".kubeconfig")
	kc := Kubeconfig(l.APIServerURL(), ca.KeyPair().CertPEM, "system:node:"+nodeName, kp)
	if err := writeFile(path, kc); err != nil {
		return "", err
	}
	return path, nil
}

func writePair(l Layout, name string, kp KeyPair) error {
	if err := writeFile(l.PKI(name+".crt"), kp.CertPEM); err != nil {
		return err
	}
	return writeFile(l.PKI(name+".key"), kp.KeyPEM)
}

func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write %q: %w", filepath.Base(path), err)
	}
	return nil
}

// auditPolicyFile holds auditPolicy in the cluster directory.
const auditPolicyFile = "audit-policy.yaml"

// auditPolicy logs the metadata of every request once, when its response
// is complete (long-running watches when they start).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`
