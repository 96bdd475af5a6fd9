package volume

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	corev1 "k8s.io/api/core/v1"
)

// statOf returns a stat that finds one path with the given mode.
func statOf(mode fs.FileMode, err error) statFunc {
	return func(path string) (fs.FileInfo, error) {
		if err != nil {
			return nil, err
		}
		return fstest.MapFS{"f": {Mode: mode}}.Stat("f")
	}
}

func TestCheckHostPath(t *testing.T) {
	missing := statOf(0, fs.ErrNotExist)
	dir, file := statOf(fs.ModeDir|0o755, nil), statOf(0o644, nil)
	sock, char, block := statOf(fs.ModeSocket, nil), statOf(fs.ModeDevice|fs.ModeCharDevice, nil), statOf(fs.ModeDevice, nil)
	tests := []struct {
		name    string
		typ     corev1.HostPathType
		stat    statFunc
		want    hostPathAction
		wantErr string
	}{
		{name: "unset missing", typ: corev1.HostPathUnset, stat: missing, want: hostPathUse},
		{name: "DirectoryOrCreate missing", typ: corev1.HostPathDirectoryOrCreate, stat: missing, want: hostPathCreateDir},
		{name: "DirectoryOrCreate dir", typ: corev1.HostPathDirectoryOrCreate, stat: dir, want: hostPathUse},
		{name: "DirectoryOrCreate file", typ: corev1.HostPathDirectoryOrCreate, stat: file, wantErr: "hostPath type check failed: /p is not a directory"},
		{name: "Directory missing", typ: corev1.HostPathDirectory, stat: missing, wantErr: "hostPath type check failed: /p is not a directory"},
		{name: "Directory dir", typ: corev1.HostPathDirectory, stat: dir, want: hostPathUse},
		{name: "FileOrCreate missing", typ: corev1.HostPathFileOrCreate, stat: missing, want: hostPathCreateFile},
		{name: "FileOrCreate dir", typ: corev1.HostPathFileOrCreate, stat: dir, wantErr: "hostPath type check failed: /p is not a file"},
		{name: "File file", typ: corev1.HostPathFile, stat: file, want: hostPathUse},
		{name: "File missing", typ: corev1.HostPathFile, stat: missing, wantErr: "hostPath type check failed: /p is not a file"},
		{name: "Socket socket", typ: corev1.HostPathSocket, stat: sock, want: hostPathUse},
		{name: "Socket file", typ: corev1.HostPathSocket, stat: file, wantErr: "hostPath type check failed: /p is not a socket file"},
		{name: "CharDevice char", typ: corev1.HostPathCharDev, stat: char, want: hostPathUse},
		{name: "CharDevice block", typ: corev1.HostPathCharDev, stat: block, wantErr: "hostPath type check failed: /p is not a character device"},
		{name: "BlockDevice block", typ: corev1.HostPathBlockDev, stat: block, want: hostPathUse},
		{name: "BlockDevice char", typ: corev1.HostPathBlockDev, stat: char, wantErr: "hostPath type check failed: /p is not a block device"},
		{name: "invalid type", typ: "Weird", stat: dir, wantErr: "Weird is an invalid volume type"},
		{name: "stat error", typ: corev1.HostPathDirectory, stat: statOf(0, errors.New("boom")), wantErr: "hostPath type check failed: stat /p: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkHostPath("/p", tt.typ, tt.stat)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("checkHostPath() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("checkHostPath() = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestSetUpHostPathCreates(t *testing.T) {
	root := t.TempDir()
	dirType, fileType := corev1.HostPathDirectoryOrCreate, corev1.HostPathFileOrCreate
	d := filepath.Join(root, "a", "b")
	if got, err := setUpHostPath(&corev1.HostPathVolumeSource{Path: d, Type: &dirType}); err != nil || got != d {
		t.Fatalf("setUpHostPath(dir) = %q, %v", got, err)
	}
	if info, err := os.Stat(d); err != nil || !info.IsDir() {
		t.Errorf("directory not created: %v", err)
	}
	f := filepath.Join(root, "f")
	if _, err := setUpHostPath(&corev1.HostPathVolumeSource{Path: f, Type: &fileType}); err != nil {
		t.Fatalf("setUpHostPath(file) = %v", err)
	}
	if info, err := os.Stat(f); err != nil || !info.Mode().IsRegular() {
		t.Errorf("file not created: %v", err)
	}
}
