package csi

import (
	"go/ast"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

const (
	upCSI = "k8s.io/kubernetes/pkg/volume/csi"
	upNIM = upCSI + "/nodeinfomanager"
)

// TestSpecVersionMatchesUpstream: berth speaks the CSI protocol of the
// kubelet it stands in for.
func TestSpecVersionMatchesUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	const mod = "github.com/container-storage-interface/spec"
	if own, up := src.BerthVersion(mod), src.Version(mod); own != up {
		t.Errorf("berth builds against %s %s, upstream requires %s", mod, own, up)
	}
}

// TestNumbersMatchUpstream pins the call timeout, the API server poll at
// start and the two back-offs.
func TestNumbersMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	if up := src.Value(upCSI, "csiTimeout").AsDuration(); up != Timeout {
		t.Errorf("Timeout %v, upstream's csiTimeout %v", Timeout, up)
	}
	poll := src.Func(upCSI, "waitForAPIServerForever").Calls("wait", "PollImmediateInfinite")
	if len(poll) != 1 {
		t.Fatalf("upstream's waitForAPIServerForever has %d wait.PollImmediateInfinite calls, want 1", len(poll))
	}
	if up := poll[0].Arg(0).AsDuration(); up != apiPollInterval {
		t.Errorf("apiPollInterval %v, upstream %v", apiPollInterval, up)
	}
	if diff := cmp.Diff(backoffOf(t, src.Value(upNIM, "updateBackoff")), updateBackoff()); diff != "" {
		t.Errorf("updateBackoff (-upstream +ours):\n%s", diff)
	}
	var inits []wait.Backoff
	for _, lit := range src.Func(upCSI, "initializeCSINode").CompositeLits() {
		if sel, ok := lit.Node.(*ast.CompositeLit).Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Backoff" {
			inits = append(inits, backoffOf(t, lit))
		}
	}
	if len(inits) != 1 {
		t.Fatalf("upstream's initializeCSINode has %d wait.Backoff literals, want 1", len(inits))
	}
	if diff := cmp.Diff(inits[0], initBackoff()); diff != "" {
		t.Errorf("initBackoff (-upstream +ours):\n%s", diff)
	}
}

func backoffOf(t *testing.T, lit upstreamsrc.Node) wait.Backoff {
	t.Helper()
	var b wait.Backoff
	for name, v := range lit.Fields() {
		switch name {
		case "Steps":
			b.Steps = int(v.AsInt())
		case "Duration":
			b.Duration = v.AsDuration()
		case "Factor":
			b.Factor = v.AsFloat()
		case "Jitter":
			b.Jitter = v.AsFloat()
		case "Cap":
			b.Cap = v.AsDuration()
		default:
			t.Fatalf("upstream's back-off sets %s: compare it too", name)
		}
	}
	return b
}

// TestNamesMatchUpstream pins the annotation, the messages' prefix and
// the list of migrated plugins: the in-tree plugins upstream's CSI plugin
// Init enters as migrated, each unconditionally.
func TestNamesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	if up := src.Value(upNIM, "annotationKeyNodeID").AsString(); up != AnnotationNodeID {
		t.Errorf("AnnotationNodeID %q, upstream %q", AnnotationNodeID, up)
	}
	if up := src.Value(upCSI, "CSIPluginName").AsString(); up != pluginName {
		t.Errorf("pluginName %q, upstream's CSIPluginName %q", pluginName, up)
	}
	if lits := src.Func(upCSI, "log").StringLiterals(); !slices.Contains(lits, "%s: %s") {
		t.Errorf("upstream's log no longer formats %q: update logf", "%s: %s")
	}
	var maps []upstreamsrc.Node
	for _, lit := range src.Func(upCSI, "Init").CompositeLits() {
		if _, ok := lit.Node.(*ast.CompositeLit).Type.(*ast.MapType); ok {
			maps = append(maps, lit)
		}
	}
	if len(maps) != 1 {
		t.Fatalf("upstream's Init has %d map literals, want 1 (migratedPlugins)", len(maps))
	}
	var up []string
	for _, e := range maps[0].Entries() {
		name := e.Key.AsString()
		up = append(up, name)
		if !returnsTrue(e.Value.Node) {
			t.Errorf("upstream migrates %s only under a condition: MigratedPlugins lists it always", name)
		}
	}
	slices.Sort(up)
	if diff := cmp.Diff(up, MigratedPlugins()); diff != "" {
		t.Errorf("MigratedPlugins (-upstream +ours):\n%s", diff)
	}
}

// returnsTrue reports whether x is func() bool { return true }.
func returnsTrue(x ast.Node) bool {
	fl, ok := x.(*ast.FuncLit)
	if !ok || len(fl.Body.List) != 1 {
		return false
	}
	ret, ok := fl.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return false
	}
	id, ok := ret.Results[0].(*ast.Ident)
	return ok && id.Name == "true"
}

// TestMessagesMatchUpstream pins the messages berth copies to the
// literals of the upstream functions that say them (berth's wrap with %w
// where upstream's format with %v).
func TestMessagesMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	for _, tc := range []struct {
		pkg, fn string
		msgs    []string
	}{
		{upCSI, "validateVersions", []string{msgNoVersions, msgBadVersion, msgRegistered}},
		{upCSI, "ValidatePlugin", []string{msgValidation}},
		{upCSI, "initializeCSINode", []string{msgNotInitialized, msgInitFailed}},
		{upCSI, "newCsiDriverClient", []string{msgNoName, msgNoDriver}},
		{upCSI, "NodeGetVolumeStats", []string{msgNoUsage}},
		{upNIM, "InstallCSIDriver", []string{msgNoNodeID, msgInstallNode, msgInstallCSINode}},
		{upNIM, "UninstallCSIDriver", []string{msgUninstallCSI, msgUninstallNode}},
		{upNIM, "updateTopologyLabels", []string{msgCollision}},
		{upNIM, "buildNodeIDMapFromAnnotation", []string{msgBadAnnotation}},
		{upNIM, "ensureNodeOwnsCSINode", []string{msgOwnedElsewhere}},
	} {
		lits := src.Func(tc.pkg, tc.fn).StringLiterals()
		for _, msg := range tc.msgs {
			if up := strings.ReplaceAll(msg, "%w", "%v"); !slices.Contains(lits, up) {
				t.Errorf("upstream's %s has no literal %q", tc.fn, up)
			}
		}
	}
}

// TestBlockPathsMatchUpstream pins the names of a block volume's paths:
// the volumeDevices directory (the kubelet's), staging and publish
// (csiBlockMapper's GetStagingPath, getPublishDir), dev and data
// (getVolumeDevicePluginDir, getVolumeDeviceDataDir), and the step names
// of upstream's FailedMapVolume messages.
func TestBlockPathsMatchUpstream(t *testing.T) {
	src := upstreamsrc.New(t)
	const kubeletConfig = "k8s.io/kubernetes/pkg/kubelet/kubeletconfig"
	if up := src.Value(kubeletConfig, "DefaultKubeletVolumeDevicesDirName").AsString(); up != volumeDevicesDir {
		t.Errorf("volumeDevicesDir %q, upstream %q", volumeDevicesDir, up)
	}
	for fn, want := range map[string]string{
		"GetStagingPath": blockStagingDir, "getPublishDir": blockPublishDir,
		"getVolumeDevicePluginDir": blockMapDir, "getVolumeDeviceDataDir": blockDataDir,
	} {
		if lits := src.Func(upCSI, fn).StringLiterals(); !slices.Contains(lits, want) {
			t.Errorf("upstream's %s has string literals %q, not %q", fn, lits, want)
		}
	}
	const opGen = "k8s.io/kubernetes/pkg/volume/util/operationexecutor"
	// The package has a fake of the same method name: every file's.
	var lits []string
	for _, f := range src.Files(opGen) {
		lits = append(lits, f.StringLiterals()...)
	}
	for _, op := range []string{OpSetUpDevice, OpMapPodDevice, OpMapBlockVolume} {
		if !slices.Contains(lits, op+" failed") {
			t.Errorf("upstream's operation generator has no %q", op+" failed")
		}
	}
}
