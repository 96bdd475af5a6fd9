package pluginmanager

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
)

// openSocket opens the socket at path below the directory root without
// following a symlink on the way (STYLE rule 15) and checks that it is
// the socket the directory showed (id's inode): berth connects to the file
// it found, never to where a link, or a file swapped in since, leads. The
// caller closes the handle (an O_PATH one: connect reaches the socket
// through /proc/self/fd).
func openSocket(root, path string, id socketID) (*os.File, error) {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return nil, err
	}
	rootFd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %q: %w", root, err)
	}
	defer unix.Close(rootFd)
	fd, err := unix.Openat2(rootFd, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, fmt.Errorf("open %q below %q: %w", rel, root, err)
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %q: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK || st.Ino != id.Inode {
		f.Close()
		return nil, fmt.Errorf("%q is no longer the socket found in the directory", path)
	}
	return f, nil
}

// connect opens a gRPC connection to the socket sock (from openSocket),
// and waits, at most dialTimeout, until it is ready, as upstream's
// blocking dial. sock must stay open while the connection is used.
func connect(ctx context.Context, sock *os.File) (*grpc.ClientConn, error) {
	addr := fmt.Sprintf("/proc/self/fd/%d", sock.Fd())
	dial := func(ctx context.Context, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", addr)
	}
	conn, err := grpc.NewClient("passthrough:///plugin", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(dial), grpc.WithAuthority("localhost"))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	conn.Connect()
	for {
		state := conn.GetState()
		if state == connectivity.Ready {
			return conn, nil
		}
		if !conn.WaitForStateChange(ctx, state) {
			_ = conn.Close()
			return nil, fmt.Errorf("wait for the connection (%s): %w", state, ctx.Err())
		}
	}
}

// idOf is the ID of the file fi describes (from Lstat).
func idOf(fi os.FileInfo) socketID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return socketID{}
	}
	return socketID{Inode: st.Ino, Ctime: time.Unix(st.Ctim.Unix())}
}
