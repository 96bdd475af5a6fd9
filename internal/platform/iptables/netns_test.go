package iptables

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	utilexec "k8s.io/utils/exec"
)

// netnsEnv tells the test binary that it runs as the child of
// TestRunnerInPrivateNetns; its value is the parent's network namespace,
// which the child must not be in.
const netnsEnv = "BERTH_IPTABLES_TEST_PARENT_NETNS"

// TestRunnerInPrivateNetns applies the plan twice with the real iptables
// and ip6tables, in a network namespace of its own (unshare --net), so the
// host's tables are never touched, and checks what iptables-save lists:
// every chain and rule, once.
func TestRunnerInPrivateNetns(t *testing.T) {
	if os.Getenv(netnsEnv) != "" {
		return // the child: TestMain ran it
	}
	for _, bin := range []string{"unshare", "iptables", "ip6tables", "iptables-save", "ip6tables-save"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed", bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace of its own")
	}
	parent, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--net", "--", os.Args[0], "-test.run=^TestRunnerInPrivateNetns$", "-test.count=1")
	cmd.Env = append(os.Environ(), netnsEnv+"="+parent)
	out, err := cmd.CombinedOutput() // waits: the child never outlives the test
	if err != nil {
		t.Fatalf("child in a private network namespace: %v\n%s", err, out)
	}
	saved := string(out)
	for _, want := range []string{
		"-A INPUT -j KUBE-FIREWALL",
		"-A OUTPUT -j KUBE-FIREWALL",
		`-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP`,
	} {
		if n := strings.Count(saved, want+"\n"); n != 1 {
			t.Errorf("iptables-save lists %q %d times, want once:\n%s", want, n, saved)
		}
	}
	// The hint chain in both families' mangle tables, the firewall chain
	// in IPv4's filter table only.
	if n := strings.Count(saved, ":KUBE-IPTABLES-HINT "); n != 2 {
		t.Errorf("KUBE-IPTABLES-HINT listed %d times, want 2 (IPv4 and IPv6):\n%s", n, saved)
	}
	if n := strings.Count(saved, ":KUBE-FIREWALL "); n != 1 {
		t.Errorf("KUBE-FIREWALL listed %d times, want 1 (IPv4):\n%s", n, saved)
	}
}

// TestMain runs the child of TestRunnerInPrivateNetns: it applies the
// plans in its own network namespace and prints both families' tables.
func TestMain(m *testing.M) {
	parent := os.Getenv(netnsEnv)
	if parent == "" {
		os.Exit(m.Run())
	}
	if own, err := os.Readlink("/proc/self/ns/net"); err != nil || own == parent {
		os.Stderr.WriteString("refusing to touch iptables outside a private network namespace\n")
		os.Exit(2)
	}
	ctx := context.Background()
	for _, f := range []Family{IPv4, IPv6} {
		r := NewRunner(utilexec.New(), f)
		if err := r.Present(ctx); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		for range 2 { // the second time finds everything in place
			if err := r.Apply(ctx, UtilChains(f)); err != nil {
				os.Stderr.WriteString(err.Error() + "\n")
				os.Exit(1)
			}
		}
	}
	for _, save := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(save).CombinedOutput()
		os.Stdout.Write(out)
		if err != nil {
			os.Exit(1)
		}
	}
	os.Exit(0)
}
