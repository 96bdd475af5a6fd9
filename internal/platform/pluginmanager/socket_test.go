package pluginmanager

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenSocket: what is dialled is the socket the directory showed:
// a symlink in its place, a directory symlink on the way, another socket
// made at the same path since, or a file, is refused.
func TestOpenSocket(t *testing.T) {
	dir, outside := socketDir(t), socketDir(t)
	listen := func(path string) {
		t.Helper()
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
	}
	idAt := func(path string) socketID {
		t.Helper()
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		return idOf(fi)
	}
	sock := filepath.Join(dir, "p.sock")
	listen(sock)
	id := idAt(sock)
	f, err := openSocket(dir, sock, id)
	if err != nil {
		t.Fatalf("open the socket found: %v", err)
	}
	f.Close()

	out := filepath.Join(outside, "out.sock")
	listen(out)
	link := filepath.Join(dir, "link.sock")
	if err := os.Symlink(out, link); err != nil {
		t.Fatal(err)
	}
	linkDir := filepath.Join(dir, "linkdir")
	if err := os.Symlink(outside, linkDir); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	listen(sock) // a new socket at the found one's path
	for name, tc := range map[string]struct {
		path string
		id   socketID
	}{
		"symlink to a socket":           {link, idAt(out)},
		"socket below a directory link": {filepath.Join(linkDir, "out.sock"), idAt(out)},
		"another socket since":          {sock, id},
		"not a socket":                  {file, idAt(file)},
	} {
		if f, err := openSocket(dir, tc.path, tc.id); err == nil {
			f.Close()
			t.Errorf("%s: opened, want refused", name)
		}
	}
}
