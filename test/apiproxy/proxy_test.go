package apiproxy

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// apiServer is a stand-in API server: /version answers, /watch streams a
// line a second until the client goes.
func apiServer(t *testing.T) *httptest.Server {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/version":
			fmt.Fprint(w, `{"gitVersion":"v1.37.2"}`)
		case "/watch":
			for {
				fmt.Fprintln(w, `{"type":"BOOKMARK"}`)
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func writeConfig(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: srv.URL, CertificateAuthorityData: ca}
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "node-token"}
	cfg.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "x"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// client trusts the proxy as its kubeconfig says.
func client(t *testing.T, kubeconfig string) (*http.Client, string) {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Clusters["c"]
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.CertificateAuthorityData) {
		t.Fatal("no CA in the proxy's kubeconfig")
	}
	if cfg.AuthInfos["u"].Token != "node-token" {
		t.Errorf("the proxy's kubeconfig lost the user: %+v", cfg.AuthInfos["u"])
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}, c.Server
}

func TestProxyForwardsThenFaults(t *testing.T) {
	p, err := Start(writeConfig(t, apiServer(t)), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	hc, base := client(t, p.Kubeconfig())

	resp, err := hc.Get(base + "/version")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != `{"gitVersion":"v1.37.2"}` {
		t.Fatalf("GET /version through the proxy: %d %q", resp.StatusCode, body)
	}

	watch, err := hc.Get(base + "/watch")
	if err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(watch.Body)
	if !lines.Scan() {
		t.Fatalf("the watch streamed nothing: %v", lines.Err())
	}
	cut := make(chan struct{})
	go func() {
		for lines.Scan() {
		}
		close(cut)
	}()
	p.Inject(Fault{Status: http.StatusTooManyRequests, RetryAfter: 2 * time.Second})
	select {
	case <-cut:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch in flight was not cut by the fault")
	}
	watch.Body.Close()

	resp, err = hc.Get(base + "/version")
	if err != nil {
		t.Fatal(err)
	}
	var st metav1.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "2" ||
		st.Reason != metav1.StatusReasonTooManyRequests || st.Code != http.StatusTooManyRequests {
		t.Errorf("under the fault: %d, Retry-After %q, status %+v", resp.StatusCode, resp.Header.Get("Retry-After"), st)
	}

	p.Clear()
	resp, err = hc.Get(base + "/version")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("after Clear: %d", resp.StatusCode)
	}
	if req, refused := p.Counts(); req != 4 || refused != 1 {
		t.Errorf("counts = %d requests, %d refused; want 4, 1", req, refused)
	}
	if _, err := os.Stat(p.Kubeconfig()); err != nil {
		t.Error(err)
	}
}
