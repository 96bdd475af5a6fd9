package certificate

import (
	"context"
	"crypto"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"net"
	"sort"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/certificate/csr"
	"k8s.io/client-go/util/keyutil"
	netutils "k8s.io/utils/net"
)

// The key pairs' name prefixes in --cert-dir, as upstream: the stores keep
// <prefix>-<time>.pem and the <prefix>-current.pem link.
const (
	clientPairPrefix  = "kubelet-client"
	servingPairPrefix = "kubelet-server"
	// tmpClientKeyFile keeps the bootstrap key until its CSR is issued, so
	// a restart reuses it (and finds the same CSR) instead of making a new
	// one.
	tmpClientKeyFile = "kubelet-client.key.tmp"
	// nodesGroup is the organization of every node certificate.
	nodesGroup = "system:nodes"
	// issueTimeout bounds the wait for a bootstrap CSR to be approved and
	// issued, as upstream.
	issueTimeout = time.Hour
)

// nodeSubject is the subject of the node's certificates:
// system:node:<name> in the system:nodes group, which the API server's Node
// authorizer and the CSR approver recognise.
func nodeSubject(nodeName string) pkix.Name {
	return pkix.Name{CommonName: "system:node:" + nodeName, Organization: []string{nodesGroup}}
}

// ClientTemplate is the CSR template of the node's client certificate.
func ClientTemplate(nodeName string) *x509.CertificateRequest {
	return &x509.CertificateRequest{Subject: nodeSubject(nodeName)}
}

// ServingTemplate is the CSR template of the node's serving certificate, as
// upstream's: the node's subject with its host names and addresses as SANs
// (servingSANs). Without an IP address it is nil and nothing is requested,
// as upstream without the AllowDNSOnlyNodeCSR gate (off by default).
func ServingTemplate(nodeName string, addrs []corev1.NodeAddress) *x509.CertificateRequest {
	dns, ips := servingSANs(addrs)
	if len(ips) == 0 {
		return nil
	}
	return &x509.CertificateRequest{Subject: nodeSubject(nodeName), DNSNames: dns, IPAddresses: ips}
}

// servingSANs turns Node addresses into SANs, each once and sorted: a
// Hostname that is an IP is an IP SAN, else a DNS SAN; Internal and
// External IPs are IP SANs (an entry that does not parse is dropped);
// Internal and External DNS names are DNS SANs.
func servingSANs(addrs []corev1.NodeAddress) (dns []string, ips []net.IP) {
	names, addresses := map[string]bool{}, map[string]net.IP{}
	for _, a := range addrs {
		if a.Address == "" {
			continue
		}
		ip := netutils.ParseIPSloppy(a.Address)
		switch a.Type {
		case corev1.NodeHostName:
			if ip != nil {
				addresses[ip.String()] = ip
			} else {
				names[a.Address] = true
			}
		case corev1.NodeInternalIP, corev1.NodeExternalIP:
			if ip != nil {
				addresses[ip.String()] = ip
			}
		case corev1.NodeInternalDNS, corev1.NodeExternalDNS:
			names[a.Address] = true
		}
	}
	for n := range names {
		dns = append(dns, n)
	}
	sort.Strings(dns)
	for _, ip := range addresses {
		ips = append(ips, ip)
	}
	sort.Slice(ips, func(i, j int) bool { return ips[i].String() < ips[j].String() })
	return dns, ips
}

// requestClientCertificate sends the node's client CSR for the key in
// keyPEM with the client (the bootstrap credentials) and waits, at most
// issueTimeout, for it to be approved and issued. The CSR's name is a
// digest of what it asks for, so a restart with the same key finds the
// request it already made.
func requestClientCertificate(ctx context.Context, client kubernetes.Interface, keyPEM []byte, nodeName string) ([]byte, error) {
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("parse bootstrap private key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("bootstrap private key of type %T cannot sign", key)
	}
	subject := nodeSubject(nodeName)
	csrPEM, err := certutil.MakeCSR(key, &subject, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("make client certificate request: %w", err)
	}
	usages := certificate.DefaultKubeletClientGetUsages(key)
	name, err := csrName(signer.Public(), subject, usages)
	if err != nil {
		return nil, err
	}
	reqName, reqUID, err := csr.RequestCertificateWithContext(ctx, client, csrPEM, name,
		certificatesv1.KubeAPIServerClientKubeletSignerName, nil, usages, key)
	if err != nil {
		return nil, fmt.Errorf("request client certificate %q: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, issueTimeout)
	defer cancel()
	data, err := csr.WaitForCertificate(ctx, client, reqName, reqUID)
	if err != nil {
		return nil, fmt.Errorf("wait for client certificate %q: %w", reqName, err)
	}
	return data, nil
}

// csrName is "node-csr-" and a digest of the public key, subject and
// usages: the same request always gets the same name. Each part is encoded
// and followed by a delimiter outside the encoding's alphabet, so no two
// different requests write the same stream.
func csrName(pub crypto.PublicKey, subject pkix.Name, usages []certificatesv1.KeyUsage) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("encode public key: %w", err)
	}
	parts := [][]byte{der, []byte(subject.CommonName)}
	for _, o := range subject.Organization {
		parts = append(parts, []byte(o))
	}
	for _, u := range usages {
		parts = append(parts, []byte(u))
	}
	h := sha512.New512_256()
	for _, p := range parts {
		h.Write([]byte(base64.RawURLEncoding.EncodeToString(p)))
		h.Write([]byte{'|'})
	}
	return "node-csr-" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)), nil
}
