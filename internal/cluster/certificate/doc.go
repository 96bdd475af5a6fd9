// Package certificate owns the kubelet's certificates, as upstream's
// pkg/kubelet/certificate and its bootstrap package, built on client-go's
// own machinery (util/certificate's Manager and FileStore, util/certificate/
// csr, util/keyutil, util/connrotation):
//
//   - kubeconfig.go: whether --kubeconfig still holds a usable client
//     certificate (Usable), and the kubeconfig written after bootstrapping
//     (BootstrappedKubeconfig), pointing at kubelet-client-current.pem in
//     --cert-dir;
//   - request.go: the CSR templates (client: system:node:<name> in
//     system:nodes; serving: the same subject with the node's host names and
//     addresses as SANs) and the one-shot bootstrap request that runs when
//     certificates are not rotated;
//   - client.go: NewClient, the API clients' base rest.Config for the three
//     cases upstream distinguishes (plain kubeconfig; bootstrap once;
//     rotateCertificates, where a certificate Manager renews the client
//     certificate at 70-90% of its life);
//   - transport.go: the rotating transport every API client shares: the
//     client certificate is picked per handshake (GetClientCertificate) and
//     connections made with an old one are closed (connrotation) when the
//     Manager switches;
//   - serving.go: the serving certificate through a kubernetes.io/kubelet-
//     serving CSR (serverTLSBootstrap), picked per handshake;
//   - reload.go: tlsCertFile/tlsPrivateKeyFile and the client CA bundle,
//     re-read when the files change.
//
// Nothing here decides about pods. Every type states its own concurrency
// contract; the long-running parts are components with Run(ctx) error.
package certificate
