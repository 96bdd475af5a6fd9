package podcert

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
)

// KeyTypes are the key types a podCertificate projection may ask for, as
// upstream's API validation and its podcertificate manager know them
// (upstream_test.go pins the list).
func KeyTypes() []string {
	return []string{"RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"}
}

// Upstream's messages (the kubelet's podcertificate manager);
// upstream_test.go pins them.
const (
	msgUnknownKeyType = "unknown key type %q"
	msgGenerate       = "while generating keypair: %w"
	msgEncodeKey      = "while PEM-encoding private key: %w"
	msgStubCSR        = "while generating stub PKCS#10 request: %w"
)

// newKey generates a private key of keyType on the node (crypto/rand) and
// the proof that the node holds it: an empty PKCS#10 request signed with
// it, as upstream's kubelet sends it (the API server checks the
// signature). It returns the key PEM-encoded as PKCS#8 ("PRIVATE KEY").
func newKey(keyType string) (keyPEM, stubCSR []byte, err error) {
	var key crypto.Signer
	switch keyType {
	case "RSA3072":
		key, err = rsa.GenerateKey(rand.Reader, 3072)
	case "RSA4096":
		key, err = rsa.GenerateKey(rand.Reader, 4096)
	case "ECDSAP256":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ECDSAP384":
		key, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ECDSAP521":
		key, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "ED25519":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, nil, fmt.Errorf(msgGenerate, fmt.Errorf(msgUnknownKeyType, keyType))
	}
	if err != nil {
		return nil, nil, fmt.Errorf(msgGenerate, err)
	}
	stubCSR, err = x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		return nil, nil, fmt.Errorf(msgGenerate, fmt.Errorf(msgStubCSR, err))
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf(msgEncodeKey, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), stubCSR, nil
}

// cleanChain is the certificate chain a signer issued as the pod sees it:
// every PEM block of it as a CERTIFICATE block without headers, nothing
// between the blocks, as upstream's cleanCertificateChain.
func cleanChain(in string) []byte {
	var out bytes.Buffer
	rest := []byte(in)
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return out.Bytes()
		}
		out.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.Bytes}))
	}
}
