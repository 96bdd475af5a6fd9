package bench

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestListeningInode(t *testing.T) {
	const table = `Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000003 00000000 00000000 0001 03 40121 /run/containerd/containerd.sock
0000000000000000: 00000002 00000000 00010000 0001 01 35012 /run/containerd/containerd.sock
0000000000000000: 00000002 00000000 00010000 0001 01 35099 /run/berth-containerd2/containerd.sock
0000000000000000: 00000002 00000000 00010000 0001 01 35100
`
	for _, tc := range []struct {
		path, want string
		err        bool
	}{
		{path: "/run/containerd/containerd.sock", want: "35012"},
		{path: "/run/berth-containerd2/containerd.sock", want: "35099"},
		{path: "/run/none.sock", err: true},
	} {
		got, err := listeningInode(table, tc.path)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("listeningInode(%s) = %q, %v; want %q (error %v)", tc.path, got, err, tc.want, tc.err)
		}
	}
}

// RuntimePID finds this test process listening on a socket of its own.
func TestRuntimePID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rt.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	pid, err := RuntimePID("unix://" + path)
	if err != nil || pid != os.Getpid() {
		t.Errorf("RuntimePID = %d, %v; want this process, %d", pid, err, os.Getpid())
	}
}
