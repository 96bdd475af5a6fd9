package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	"sigs.k8s.io/kwok/pkg/config"
)

// TestWriteLoads checks that kwok's own loader reads what write prints
// back as the five default stages, two for Nodes and three for Pods.
func TestWriteLoads(t *testing.T) {
	ctx := context.Background()
	var b bytes.Buffer
	if err := write(ctx, &b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kwok.yaml")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	objs, err := config.Load(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	kinds := map[string]int{}
	for _, s := range config.FilterWithType[*internalversion.Stage](objs) {
		names = append(names, s.Name)
		kinds[s.Spec.ResourceRef.Kind]++
	}
	want := []string{"node-initialize", "node-heartbeat-with-lease", "pod-ready", "pod-complete", "pod-delete"}
	if !slices.Equal(names, want) {
		t.Errorf("stages %v, want %v", names, want)
	}
	if kinds["Node"] != 2 || kinds["Pod"] != 3 {
		t.Errorf("stages by kind %v, want 2 Node and 3 Pod", kinds)
	}
}
