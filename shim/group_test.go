package shim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestGrouping(t *testing.T) {
	for _, tc := range []struct {
		name        string
		id          string
		annotations map[string]string
		group       string
		joins       bool
	}{
		{"no annotations", "c1", nil, "c1", false},
		{"pod sandbox", "p1", map[string]string{annotationContainerType: "sandbox", annotationSandboxID: "p1"}, "p1", false},
		{"pod container", "c1", map[string]string{annotationContainerType: "container", annotationSandboxID: "p1"}, "p1", true},
		{"container naming itself", "c1", map[string]string{annotationContainerType: "container", annotationSandboxID: "c1"}, "c1", false},
		{"sandbox id without a type", "c1", map[string]string{annotationSandboxID: "p1"}, "p1", false},
		{"runc group", "c1", map[string]string{annotationGroup: "g"}, "g", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			data, _ := json.Marshal(map[string]any{"ociVersion": "1.0.2", "annotations": tc.annotations})
			if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			if g := groupID(dir, tc.id); g != tc.group {
				t.Errorf("groupID = %q, want %q", g, tc.group)
			}
			if j := joinsSandbox(dir, tc.id); j != tc.joins {
				t.Errorf("joinsSandbox = %v, want %v", j, tc.joins)
			}
		})
	}
	// A bundle without a readable config.json is its own group.
	if g := groupID(t.TempDir(), "c9"); g != "c9" {
		t.Errorf("groupID without config.json = %q", g)
	}
}
