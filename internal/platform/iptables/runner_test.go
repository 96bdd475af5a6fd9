package iptables

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	utilexec "k8s.io/utils/exec"
	fakeexec "k8s.io/utils/exec/testing"
)

// scripted is a fake exec: each call gets the next exit status (0 is
// success) and is recorded as "binary arg...".
type scripted struct {
	fakeexec.FakeExec
	calls []string
}

func newScripted(statuses ...int) *scripted {
	s := &scripted{}
	for _, st := range statuses {
		s.CommandScript = append(s.CommandScript, func(cmd string, args ...string) utilexec.Cmd {
			s.calls = append(s.calls, strings.Join(append([]string{cmd}, args...), " "))
			fc := &fakeexec.FakeCmd{CombinedOutputScript: []fakeexec.FakeAction{func() ([]byte, []byte, error) {
				if st == 0 {
					return nil, nil, nil
				}
				return []byte("iptables: failed"), nil, fakeexec.FakeExitError{Status: st}
			}}}
			return fakeexec.InitFakeCmd(fc, cmd, args...)
		})
	}
	return s
}

// TestRunnerCommands: the command plan for each family and each answer of
// iptables, as upstream's runner (exit 1 of -N: the chain exists; of -C:
// the rule is missing).
func TestRunnerCommands(t *testing.T) {
	fw := UtilChains(IPv4)
	tests := []struct {
		name     string
		family   Family
		steps    []Step
		statuses []int
		want     []string
		wantErr  string
	}{
		{
			name: "IPv4 from scratch", family: IPv4, steps: fw,
			statuses: []int{0, 0, 1, 0, 1, 0, 1, 0},
			want: []string{
				"iptables -w 5 -N KUBE-IPTABLES-HINT -t mangle",
				"iptables -w 5 -N KUBE-FIREWALL -t filter",
				"iptables -w 5 -C OUTPUT -t filter -j KUBE-FIREWALL",
				"iptables -w 5 -I OUTPUT -t filter -j KUBE-FIREWALL",
				"iptables -w 5 -C INPUT -t filter -j KUBE-FIREWALL",
				"iptables -w 5 -I INPUT -t filter -j KUBE-FIREWALL",
				"iptables -w 5 -C KUBE-FIREWALL -t filter -m comment --comment block incoming localnet connections --dst 127.0.0.0/8 ! --src 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP",
				"iptables -w 5 -A KUBE-FIREWALL -t filter -m comment --comment block incoming localnet connections --dst 127.0.0.0/8 ! --src 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP",
			},
		},
		{
			name: "IPv4 already there", family: IPv4, steps: fw,
			statuses: []int{1, 1, 0, 0, 0},
			want: []string{
				"iptables -w 5 -N KUBE-IPTABLES-HINT -t mangle",
				"iptables -w 5 -N KUBE-FIREWALL -t filter",
				"iptables -w 5 -C OUTPUT -t filter -j KUBE-FIREWALL",
				"iptables -w 5 -C INPUT -t filter -j KUBE-FIREWALL",
				"iptables -w 5 -C KUBE-FIREWALL -t filter -m comment --comment block incoming localnet connections --dst 127.0.0.0/8 ! --src 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP",
			},
		},
		{
			name: "IPv6: the hint chain only", family: IPv6, steps: UtilChains(IPv6),
			statuses: []int{0},
			want:     []string{"ip6tables -w 5 -N KUBE-IPTABLES-HINT -t mangle"},
		},
		{
			name: "a chain that cannot be made stops the plan", family: IPv4, steps: fw,
			statuses: []int{4},
			want:     []string{"iptables -w 5 -N KUBE-IPTABLES-HINT -t mangle"},
			wantErr:  `create chain "KUBE-IPTABLES-HINT" in table "mangle": exit 4: iptables: failed`,
		},
		{
			name: "a failed check is not a missing rule", family: IPv4, steps: fw[2:3],
			statuses: []int{2},
			want:     []string{"iptables -w 5 -C OUTPUT -t filter -j KUBE-FIREWALL"},
			wantErr:  `check rule in chain "OUTPUT" of table "filter": exit 2: iptables: failed`,
		},
		{
			name: "a failed insert", family: IPv4, steps: fw[2:3],
			statuses: []int{1, 2},
			want:     []string{"iptables -w 5 -C OUTPUT -t filter -j KUBE-FIREWALL", "iptables -w 5 -I OUTPUT -t filter -j KUBE-FIREWALL"},
			wantErr:  `add rule to chain "OUTPUT" of table "filter": exit 2: iptables: failed`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := newScripted(tt.statuses...)
			err := NewRunner(ex, tt.family).Apply(context.Background(), tt.steps)
			if diff := cmp.Diff(tt.want, ex.calls); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			if got := errString(err); got != tt.wantErr {
				t.Errorf("error %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func TestRunnerChainExists(t *testing.T) {
	for _, tt := range []struct {
		status       int
		exists, resE bool
	}{{0, true, false}, {1, false, false}, {4, false, true}} {
		ex := newScripted(tt.status)
		exists, err := NewRunner(ex, IPv4).ChainExists(context.Background(), TableMangle, CanaryChain)
		if exists != tt.exists || IsResourceError(err) != tt.resE {
			t.Errorf("status %d: exists %v, resource error %v (%v); want %v, %v", tt.status, exists, IsResourceError(err), err, tt.exists, tt.resE)
		}
		if want := []string{"iptables -w 5 -S KUBE-KUBELET-CANARY -t mangle"}; !cmp.Equal(want, ex.calls) {
			t.Errorf("commands %q, want %q", ex.calls, want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
