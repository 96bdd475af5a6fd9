package cluster

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"math/big"
	"os"
	"strings"
)

// The kubeadm names of node TLS bootstrap (kubeadm's phases bootstrap-token
// and kubelet-finalize): the group a bootstrap token authenticates into
// besides system:bootstrappers, and the cluster roles the node bootstrap
// bindings grant.
const (
	BootstrapGroup        = "system:bootstrappers:kubeadm:default-node-token"
	nodeBootstrapperRole  = "system:node-bootstrapper"
	nodeClientRole        = "system:certificates.k8s.io:certificatesigningrequests:nodeclient"
	selfNodeClientRole    = "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"
	nodesGroup            = "system:nodes"
	bootstrapManifestFile = "bootstrap.yaml"
	bootstrapKubeconfig   = "bootstrap-kubelet.kubeconfig"
	tokenAlphabet         = "abcdefghijklmnopqrstuvwxyz0123456789"
)

// BootstrapToken is a bootstrap token: <id>.<secret>.
type BootstrapToken struct{ ID, Secret string }

// String is the token as a bearer token.
func (t BootstrapToken) String() string { return t.ID + "." + t.Secret }

// newBootstrapToken makes a random token: 6 and 16 characters of [a-z0-9].
func newBootstrapToken() (BootstrapToken, error) {
	pick := func(n int) (string, error) {
		var sb strings.Builder
		for range n {
			i, err := rand.Int(rand.Reader, big.NewInt(int64(len(tokenAlphabet))))
			if err != nil {
				return "", fmt.Errorf("make bootstrap token: %w", err)
			}
			sb.WriteByte(tokenAlphabet[i.Int64()])
		}
		return sb.String(), nil
	}
	id, err := pick(6)
	if err != nil {
		return BootstrapToken{}, err
	}
	secret, err := pick(16)
	if err != nil {
		return BootstrapToken{}, err
	}
	return BootstrapToken{ID: id, Secret: secret}, nil
}

// BootstrapManifest is what kubeadm creates for node TLS bootstrap: the
// token's Secret in kube-system (authentication and signing usages, the
// kubeadm group), and the cluster role bindings that let the group create
// node CSRs and have them approved, and let nodes renew their own client
// certificates.
func BootstrapManifest(tok BootstrapToken) string {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	var sb strings.Builder
	fmt.Fprintf(&sb, `apiVersion: v1
kind: Secret
metadata:
  name: bootstrap-token-%s
  namespace: kube-system
type: bootstrap.kubernetes.io/token
data:
  token-id: %s
  token-secret: %s
  usage-bootstrap-authentication: %s
  usage-bootstrap-signing: %s
  auth-extra-groups: %s
`, tok.ID, b64(tok.ID), b64(tok.Secret), b64("true"), b64("true"), b64(BootstrapGroup))
	for _, b := range []struct{ name, group, role string }{
		{"kubeadm:kubelet-bootstrap", BootstrapGroup, nodeBootstrapperRole},
		{"kubeadm:node-autoapprove-bootstrap", BootstrapGroup, nodeClientRole},
		{"kubeadm:node-autoapprove-certificate-rotation", nodesGroup, selfNodeClientRole},
	} {
		fmt.Fprintf(&sb, `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: %s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: %s
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: Group
  name: %s
`, b.name, b.role, b.group)
	}
	return sb.String()
}

// BootstrapKubeconfig returns the path of a bootstrap kubeconfig (a
// bootstrap token, as kubeadm join writes /etc/kubernetes/
// bootstrap-kubelet.conf), creating the token and the node bootstrap RBAC
// (BootstrapManifest) on first use. A kubelet given it as
// --bootstrap-kubeconfig gets its client certificate from
// kube-controller-manager, which approves and signs node client CSRs.
func (c *Cluster) BootstrapKubeconfig(ctx context.Context) (string, error) {
	c.bootMu.Lock()
	defer c.bootMu.Unlock()
	path := c.layout.Path(bootstrapKubeconfig)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tok, err := newBootstrapToken()
	if err != nil {
		return "", err
	}
	manifest := c.layout.Path(bootstrapManifestFile)
	if err := writeFile(manifest, []byte(BootstrapManifest(tok))); err != nil {
		return "", err
	}
	if _, err := c.Kubectl(ctx, "apply", "-f", manifest); err != nil {
		return "", fmt.Errorf("create bootstrap token and RBAC: %w", err)
	}
	if err := writeFile(path, tokenKubeconfig(c.layout.APIServerURL(), c.pki.ca.KeyPair().CertPEM, "kubelet-bootstrap", tok.String())); err != nil {
		return "", err
	}
	return path, nil
}
