package server

import (
	"net/http"
	"os"
	"strings"
)

// systemLogs serves the node's log files under dir at /logs/: a directory
// listing or a file. The files are opened through an os.Root, so neither
// ".." nor a symbolic link can reach outside dir.
func systemLogs(dir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			http.Error(w, "open log directory: "+err.Error(), http.StatusInternalServerError)
			return
		}
		defer root.Close()
		name := strings.TrimPrefix(r.URL.Path, "/logs")
		if name == "" {
			name = "/"
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = name
		http.FileServerFS(root.FS()).ServeHTTP(w, r2)
	})
}
