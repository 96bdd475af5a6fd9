package hostsetup

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2/ktesting"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestKernelTunablesMatchUpstream pins KernelTunables to the desiredState
// of upstream's setupKernelTunables.
func TestKernelTunablesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	lits := src.Func("k8s.io/kubernetes/pkg/kubelet/cm", "setupKernelTunables").CompositeLits()
	if len(lits) == 0 {
		t.Fatal("upstream setupKernelTunables has no desiredState literal: update the test")
	}
	up := map[string]int{}
	for _, e := range lits[0].Entries() {
		up[e.Key.AsString()] = int(e.Value.AsInt())
	}
	own := map[string]int{}
	for _, tu := range KernelTunables() {
		own[tu.Name] = tu.Value
	}
	if diff := cmp.Diff(up, own); diff != "" {
		t.Errorf("kernel tunables differ from upstream's setupKernelTunables (-upstream +berth):\n%s", diff)
	}
}

// procSys writes a fake /proc/sys under a temporary directory with the
// required values, overridden by values ("" leaves the file out).
func procSys(t *testing.T, values map[string]string) string {
	root := t.TempDir()
	for _, tu := range KernelTunables() {
		v, ok := values[tu.Name]
		if !ok {
			v = strconv.Itoa(tu.Value) + "\n"
		}
		if v == "" {
			continue
		}
		path := filepath.Join(root, tu.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// contents reads the fake tunables back.
func contents(t *testing.T, root string) map[string]string {
	out := map[string]string{}
	for _, tu := range KernelTunables() {
		data, err := os.ReadFile(filepath.Join(root, tu.Name))
		if err != nil {
			out[tu.Name] = "<missing>"
			continue
		}
		out[tu.Name] = strings.TrimSpace(string(data))
	}
	return out
}

func TestEnsureKernelTunables(t *testing.T) {
	required := map[string]string{}
	for _, tu := range KernelTunables() {
		required[tu.Name] = strconv.Itoa(tu.Value)
	}
	for _, tc := range []struct {
		name    string
		values  map[string]string
		protect bool
		wantErr string
		// want is what the files hold afterwards, over required.
		want map[string]string
	}{
		{name: "all required, protected"},
		{name: "all required, not protected"},
		{name: "protected refuses and lists each", protect: true,
			values:  map[string]string{"vm/overcommit_memory": "0", "kernel/panic": "0", "kernel/keys/root_maxkeys": ""},
			wantErr: `protectKernelDefaults is set and kernel tunables differ from the kubelet's required values: kernel.keys.root_maxkeys: open `,
			want:    map[string]string{"vm/overcommit_memory": "0", "kernel/panic": "0", "kernel/keys/root_maxkeys": "<missing>"}},
		{name: "not protected sets them", values: map[string]string{"vm/overcommit_memory": "0", "kernel/panic_on_oops": "0"}},
		{name: "not protected, unreadable one is logged", values: map[string]string{"vm/panic_on_oom": "garbage"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			root := procSys(t, tc.values)
			err := EnsureKernelTunables(ctx, root, tc.protect)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("EnsureKernelTunables: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)) {
				t.Fatalf("EnsureKernelTunables error %v, want prefix %q", err, tc.wantErr)
			}
			want := map[string]string{}
			for k, v := range required {
				want[k] = v
			}
			for k, v := range tc.want {
				want[k] = v
			}
			if diff := cmp.Diff(want, contents(t, root)); diff != "" {
				t.Errorf("tunables afterwards (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProtectedErrorNamesEveryTunable(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	root := procSys(t, map[string]string{"vm/overcommit_memory": "0", "kernel/panic": "0\n"})
	err := EnsureKernelTunables(ctx, root, true)
	want := "protectKernelDefaults is set and kernel tunables differ from the kubelet's required values: kernel.panic is 0, must be 10; vm.overcommit_memory is 0, must be 1"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

func TestDiffering(t *testing.T) {
	readings := []Reading{
		{Tunable: Tunable{"vm/b", 1}, Actual: 1},
		{Tunable: Tunable{"vm/a", 1}, Actual: 0},
		{Tunable: Tunable{"kernel/c", 10}, Err: os.ErrNotExist},
	}
	var got []string
	for _, r := range Differing(readings) {
		got = append(got, r.String())
	}
	want := []string{"kernel.c: file does not exist (must be 10)", "vm.a is 0, must be 1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Differing (-want +got):\n%s", diff)
	}
}
