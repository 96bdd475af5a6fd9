package cluster

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// Kubeconfig renders a self-contained kubeconfig (certificates inline) for
// one user of the cluster at server. The context is named after the user.
func Kubeconfig(server string, caPEM []byte, user string, client KeyPair) []byte {
	b64 := base64.StdEncoding.EncodeToString
	var sb strings.Builder
	fmt.Fprintf(&sb, `apiVersion: v1
kind: Config
clusters:
- name: berth-dev
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %q
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: %q
  context:
    cluster: berth-dev
    user: %q
current-context: %q
`, server, b64(caPEM), user, b64(client.CertPEM), b64(client.KeyPEM), user, user, user)
	return []byte(sb.String())
}
