package certificate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/transport"
	certutil "k8s.io/client-go/util/cert"
)

// Usable reports whether the kubeconfig at path holds a client certificate
// berth can use at now, as upstream's isClientConfigStillValid: when it
// does not (reason says why), the node bootstraps. A missing file, a file
// that does not load, a key that does not match, no client certificate at
// all (token credentials) and an expired certificate are all "not usable";
// only a path that exists but cannot be examined is an error, which stops
// the start.
//
// A certificate that is not valid yet counts as usable, as upstream: only
// NotAfter is checked. A node whose clock runs behind its signer's would
// otherwise throw away every certificate it is given.
func Usable(path string, now time.Time) (usable bool, reason string, err error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return false, "kubeconfig does not exist", nil
	} else if err != nil {
		return false, "", fmt.Errorf("examine kubeconfig %q: %w", path, err)
	}
	cfg, err := loadRESTConfig(path)
	if err != nil {
		return false, fmt.Sprintf("kubeconfig does not load: %v", err), nil
	}
	tc, err := cfg.TransportConfig()
	if err != nil {
		return false, fmt.Sprintf("kubeconfig has no usable transport: %v", err), nil
	}
	// TLSConfigFor reads the certificate and key files into tc and checks
	// that they are a pair.
	if _, err := transport.TLSConfigFor(tc); err != nil {
		return false, fmt.Sprintf("kubeconfig's TLS credentials do not load: %v", err), nil
	}
	if len(tc.TLS.CertData) == 0 {
		return false, "kubeconfig has no client certificate", nil
	}
	certs, err := certutil.ParseCertsPEM(tc.TLS.CertData)
	if err != nil {
		return false, fmt.Sprintf("kubeconfig's client certificate does not parse: %v", err), nil
	}
	for _, c := range certs {
		if now.After(c.NotAfter) {
			return false, fmt.Sprintf("client certificate %q expired at %s", c.Subject.CommonName, c.NotAfter.UTC().Format(time.RFC3339)), nil
		}
	}
	return true, "", nil
}

// loadRESTConfig loads a kubeconfig's current context into a rest.Config,
// file names in it taken relative to its directory.
func loadRESTConfig(path string) (*rest.Config, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	kc, err := rules.Load()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %q: %w", path, err)
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*kc, kc.CurrentContext, &clientcmd.ConfigOverrides{}, rules).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %q: %w", path, err)
	}
	return cfg, nil
}

// BootstrappedKubeconfig is the kubeconfig written to --kubeconfig after
// bootstrapping, as upstream writes it: the bootstrap kubeconfig's server
// and CA (the file when it names one, else the data), and the client
// certificate and key both in pemPath, kubelet-client-current.pem in
// --cert-dir, which rotation keeps pointing at the newest pair.
func BootstrappedKubeconfig(bootstrap *rest.Config, pemPath string) clientcmdapi.Config {
	cluster := &clientcmdapi.Cluster{
		Server:                bootstrap.Host,
		InsecureSkipTLSVerify: bootstrap.Insecure,
		CertificateAuthority:  bootstrap.CAFile,
	}
	if bootstrap.CAFile == "" {
		cluster.CertificateAuthorityData = bootstrap.CAData
	}
	return clientcmdapi.Config{
		Clusters:  map[string]*clientcmdapi.Cluster{"default-cluster": cluster},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{"default-auth": {ClientCertificate: pemPath, ClientKey: pemPath}},
		Contexts: map[string]*clientcmdapi.Context{"default-context": {
			Cluster: "default-cluster", AuthInfo: "default-auth", Namespace: "default",
		}},
		CurrentContext: "default-context",
	}
}

// writeKubeconfig writes BootstrappedKubeconfig to path.
func writeKubeconfig(bootstrap *rest.Config, path, pemPath string) error {
	if err := clientcmd.WriteToFile(BootstrappedKubeconfig(bootstrap, pemPath), path); err != nil {
		return fmt.Errorf("write kubeconfig %q: %w", path, err)
	}
	return nil
}
