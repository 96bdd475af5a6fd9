package cluster

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Kubeconfig renders a self-contained kubeconfig (certificates inline) for
// one user of the cluster at server. The context is named after the user.
func Kubeconfig(server string, caPEM []byte, user string, client KeyPair) []byte {
	return kubeconfig(server, caPEM, user, &clientcmdapi.AuthInfo{
		ClientCertificateData: client.CertPEM,
		ClientKeyData:         client.KeyPEM,
	})
}

// tokenKubeconfig renders a kubeconfig that authenticates with a bearer
// token.
func tokenKubeconfig(server string, caPEM []byte, user, token string) []byte {
	return kubeconfig(server, caPEM, user, &clientcmdapi.AuthInfo{Token: token})
}

// kubeconfig renders one cluster, one user and their context, through
// client-go's own kubeconfig types.
func kubeconfig(server string, caPEM []byte, user string, auth *clientcmdapi.AuthInfo) []byte {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["berth-dev"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = auth
	cfg.Contexts[user] = &clientcmdapi.Context{Cluster: "berth-dev", AuthInfo: user}
	cfg.CurrentContext = user
	data, err := clientcmd.Write(*cfg)
	if err != nil { // only a type the encoder cannot handle: a programming error
		panic(fmt.Sprintf("encode kubeconfig: %v", err))
	}
	return data
}
