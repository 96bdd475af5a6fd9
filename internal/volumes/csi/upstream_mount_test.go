package csi

import (
	"go/ast"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestMountNamesMatchUpstream pins the file and directory names and the
// volume name's separator.
func TestMountNamesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for name, ours := range map[string]string{
		"volDataFileName":         volDataFile,
		"globalMountInGlobalPath": globalMount,
		"volNameSep":              volNameSep,
	} {
		if up := src.Value(upCSI, name).AsString(); up != ours {
			t.Errorf("upstream's %s %q, ours %q", name, up, ours)
		}
	}
	if lits := src.Func(upCSI, "GetCSIMounterPath").StringLiterals(); !slices.Equal(lits, []string{"/" + mountDir}) {
		t.Errorf("upstream's GetCSIMounterPath joins %q, ours %q", lits, mountDir)
	}
}

// volDataKeys maps the field names of upstream's volDataKey to their
// values.
func volDataKeys(t *testing.T, src *upstreamsrc.Source) map[string]string {
	t.Helper()
	lit := src.Value(upCSI, "volDataKey")
	st, ok := lit.Node.(*ast.CompositeLit).Type.(*ast.StructType)
	if !ok {
		t.Fatalf("upstream's volDataKey is no longer a struct literal")
	}
	var fields []string
	for _, f := range st.Fields.List {
		for _, n := range f.Names {
			fields = append(fields, n.Name)
		}
	}
	elems := lit.AsStrings()
	if len(elems) != len(fields) {
		t.Fatalf("upstream's volDataKey has %d fields and %d values", len(fields), len(elems))
	}
	out := map[string]string{}
	for i, f := range fields {
		out[f] = elems[i]
	}
	return out
}

// writtenKeys returns the keys of the map literals in fn keyed by
// volDataKey's fields (the vol_data.json it writes), sorted.
func writtenKeys(t *testing.T, src *upstreamsrc.Source, keys map[string]string, fn string) []string {
	t.Helper()
	var out []string
	for _, lit := range src.Func(upCSI, fn).CompositeLits() {
		if _, ok := lit.Node.(*ast.CompositeLit).Type.(*ast.MapType); !ok {
			continue
		}
		for _, e := range lit.Entries() {
			sel, ok := e.Key.Node.(*ast.SelectorExpr)
			if id, isID := sel.X.(*ast.Ident); !ok || !isID || id.Name != "volDataKey" {
				continue
			}
			out = append(out, keys[sel.Sel.Name])
		}
	}
	slices.Sort(out)
	return out
}

// TestVolDataKeysMatchUpstream: the keys berth writes beside a target and
// beside a staging directory are the ones upstream's SetUpAt and
// MountDevice write (seLinuxMountContext aside: only with an SELinux
// mount, which berth does not do), by upstream's names.
func TestVolDataKeysMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	keys := volDataKeys(t, src)
	const seLinux = "seLinuxMountContext"
	if keys["seLinuxMountContext"] != seLinux {
		t.Fatalf("upstream's volDataKey.seLinuxMountContext is %q", keys["seLinuxMountContext"])
	}
	ours := []string{keySpecVolID, keyVolumeHandle, keyDriverName, keyNodeName, keyAttachmentID, keyLifecycleMode, seLinux}
	if diff := cmp.Diff(slices.Sorted(maps.Values(keys)), slices.Sorted(slices.Values(ours))); diff != "" {
		t.Errorf("volDataKey values (-upstream +ours):\n%s", diff)
	}
	e := newMounterEnv(t, stageCaps(), noAttach(), secret("kube-system", "stage", nil), secret("kube-system", "publish", nil))
	if _, err := e.m.SetUp(testContext(t), testPod(testPodUID), testPV()); err != nil {
		t.Fatal(err)
	}
	for fn, dir := range map[string]string{"SetUpAt": e.target(testPodUID, testPVName), "MountDevice": e.staging(testHandle)} {
		up := slices.DeleteFunc(writtenKeys(t, src, keys, fn), func(k string) bool { return k == seLinux })
		got := slices.Sorted(maps.Keys(readVolData(t, filepath.Dir(dir))))
		if diff := cmp.Diff(up, got); diff != "" {
			t.Errorf("keys of the vol_data.json beside %s (-upstream's %s +ours):\n%s", dir, fn, diff)
		}
	}
}

// TestVolumeContextKeysMatchUpstream pins the pod information's keys and
// the tokens' key.
func TestVolumeContextKeysMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	lits := src.Func(upCSI, "getPodInfoAttrs").CompositeLits()
	if len(lits) != 1 {
		t.Fatalf("upstream's getPodInfoAttrs has %d composite literals, want 1", len(lits))
	}
	var up []string
	for _, e := range lits[0].Entries() {
		up = append(up, e.Key.AsString())
	}
	ours := slices.Collect(maps.Keys(podInfo(testPod(testPodUID), storagev1.VolumeLifecyclePersistent)))
	if diff := cmp.Diff(slices.Sorted(slices.Values(up)), slices.Sorted(slices.Values(ours))); diff != "" {
		t.Errorf("pod information keys (-upstream +ours):\n%s", diff)
	}
	if lits := src.Func(upCSI, "podServiceAccountTokenAttrs").StringLiterals(); !slices.Contains(lits, keyTokens) {
		t.Errorf("upstream's podServiceAccountTokenAttrs has no key %q", keyTokens)
	}
}

// TestMountMessagesMatchUpstream pins the messages berth copies.
func TestMountMessagesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for fn, msgs := range map[string][]string{
		"supportsVolumeLifecycleMode": {msgModeNoCSIDriver, msgModeUnsupported},
		"getFSGroupPolicy":            {msgNoFSGroupPolicy},
		"verifyAttachmentStatus":      {msgAttachDeleting},
		"WaitForAttach":               {msgAttachmentGet, msgNotAttached},
		"getCredentialsFromSecret":    {msgNoSecret},
		"MountDevice":                 {msgStageSecret},
		"SetUpAt":                     {msgPublishSecret},
	} {
		lits := src.Func(upCSI, fn).StringLiterals()
		for _, msg := range msgs {
			if up := strings.ReplaceAll(msg, "%w", "%v"); !slices.Contains(lits, up) {
				t.Errorf("upstream's %s has no literal %q", fn, up)
			}
		}
	}
}

// switchTable reads a function that is one switch over PersistentVolume
// access modes returning CSI access modes.
func switchTable(t *testing.T, src *upstreamsrc.Source, fn string) map[corev1.PersistentVolumeAccessMode]csipb.VolumeCapability_AccessMode_Mode {
	t.Helper()
	out := map[corev1.PersistentVolumeAccessMode]csipb.VolumeCapability_AccessMode_Mode{}
	ast.Inspect(src.Func(upCSI, fn).Node, func(n ast.Node) bool {
		cc, ok := n.(*ast.CaseClause)
		if !ok {
			return true
		}
		ret, ok := cc.Body[len(cc.Body)-1].(*ast.ReturnStmt)
		if !ok || len(cc.List) != 1 {
			t.Fatalf("upstream's %s: a case that is not one mode returning one mode", fn)
		}
		am := cc.List[0].(*ast.SelectorExpr).Sel.Name
		mode := strings.TrimPrefix(ret.Results[0].(*ast.SelectorExpr).Sel.Name, "VolumeCapability_AccessMode_")
		v, ok := csipb.VolumeCapability_AccessMode_Mode_value[mode]
		if !ok {
			t.Fatalf("upstream's %s returns %s, not a CSI access mode", fn, mode)
		}
		out[corev1.PersistentVolumeAccessMode(am)] = csipb.VolumeCapability_AccessMode_Mode(v)
		return false
	})
	return out
}

// TestAccessModesMatchUpstream: accessMode maps each access mode as
// upstream's two tables do.
func TestAccessModesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for fn, multiWriter := range map[string]bool{"asCSIAccessModeV1": false, "asSingleNodeMultiWriterCapableCSIAccessModeV1": true} {
		table := switchTable(t, src, fn)
		if len(table) != 4 {
			t.Errorf("upstream's %s maps %d access modes, want 4", fn, len(table))
		}
		for am, up := range table {
			if got := accessMode([]corev1.PersistentVolumeAccessMode{am}, multiWriter); got != up {
				t.Errorf("accessMode(%s, multiWriter %v) = %v, upstream's %s %v", am, multiWriter, got, fn, up)
			}
		}
	}
}

// TestUncertainCodesMatchUpstream: the gRPC codes after which an
// operation may be in progress are upstream's isFinalError's.
func TestUncertainCodesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	up := map[string]bool{}
	ast.Inspect(src.Func(upCSI, "isFinalError").Node, func(n ast.Node) bool {
		if cc, ok := n.(*ast.CaseClause); ok {
			for _, e := range cc.List {
				up[e.(*ast.SelectorExpr).Sel.Name] = true
			}
		}
		return true
	})
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if got := uncertainCode(c); got != up[c.String()] {
			t.Errorf("uncertainCode(%v) = %v, upstream's isFinalError says final: %v", c, got, !up[c.String()])
		}
	}
}

// TestAttachBackoffMatchesUpstream pins the wait for an attachment to
// upstream's back-off numbers.
func TestAttachBackoffMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	vars := map[string]upstreamsrc.Node{}
	fn := src.Func(upCSI, "waitForVolumeAttachDetachStatusWithLister")
	ast.Inspect(fn.Node, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for i, name := range vs.Names {
				vars[name.Name] = fn.Sub(vs.Values[i])
			}
		}
		return true
	})
	b := attachBackoff()
	if up := vars["initBackoff"].AsDuration(); up != b.Duration {
		t.Errorf("first wait %v, upstream's %v", b.Duration, up)
	}
	if up := vars["maxBackoff"].AsDuration(); up != b.Cap {
		t.Errorf("longest wait %v, upstream's %v", b.Cap, up)
	}
	if up := vars["backoffFactor"].AsFloat(); up != b.Factor {
		t.Errorf("factor %v, upstream's %v", b.Factor, up)
	}
	var waits []time.Duration
	for range 3 {
		waits = append(waits, b.Step())
	}
	if diff := cmp.Diff([]time.Duration{500 * time.Millisecond, 525 * time.Millisecond, 551250 * time.Microsecond}, waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}
