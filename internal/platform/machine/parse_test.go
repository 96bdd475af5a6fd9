package machine

import (
	"os"
	"path/filepath"
	"testing"
)

func testdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseCPUInfo(t *testing.T) {
	tests := []struct {
		name string
		data string
		want int
	}{
		{"x86", testdata(t, "cpuinfo-x86"), 2},
		{"arm64", testdata(t, "cpuinfo-arm64"), 4},
		{"empty", "", 0},
		{"processor only in a value", "model name\t: processor X\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseCPUInfo(tt.data); got != tt.want {
				t.Errorf("ParseCPUInfo() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestParseMemInfo(t *testing.T) {
	tests := []struct {
		name      string
		data      string
		mem, swap int64
		wantErr   bool
	}{
		{"full", testdata(t, "meminfo"), 24567480 * 1024, 2097148 * 1024, false},
		{"no swap line", "MemTotal: 1024 kB\n", 1024 * 1024, 0, false},
		{"no unit", "MemTotal: 1024\n", 1024, 0, false},
		{"no MemTotal", "MemFree: 1 kB\n", 0, 0, true},
		{"garbage", "MemTotal: lots kB\n", 0, 0, true},
		{"wrong unit", "MemTotal: 1 MB\n", 0, 0, true},
		{"negative", "MemTotal: -1 kB\n", 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem, swap, err := ParseMemInfo(tt.data)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseMemInfo() error = %v, wantErr %v", err, tt.wantErr)
			}
			if mem != tt.mem || swap != tt.swap {
				t.Errorf("ParseMemInfo() = %d, %d, want %d, %d", mem, swap, tt.mem, tt.swap)
			}
		})
	}
}

func TestParseHugePageDir(t *testing.T) {
	tests := []struct {
		name   string
		want   int64
		wantOK bool
		size   string
	}{
		{"hugepages-2048kB", 2 << 20, true, "2Mi"},
		{"hugepages-1048576kB", 1 << 30, true, "1Gi"},
		{"hugepages-64kB", 64 << 10, true, "64Ki"},
		{"hugepages-kB", 0, false, ""},
		{"hugepages-2048", 0, false, ""},
		{"other-2048kB", 0, false, ""},
		{"hugepages-0kB", 0, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseHugePageDir(tt.name)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("ParseHugePageDir() = %d, %v, want %d, %v", got, ok, tt.want, tt.wantOK)
			}
			if ok && HugePageSize(got) != tt.size {
				t.Errorf("HugePageSize(%d) = %q, want %q", got, HugePageSize(got), tt.size)
			}
		})
	}
}

func TestParseOSRelease(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"debian", testdata(t, "os-release-debian"), "Debian GNU/Linux 12 (bookworm)"},
		{"unquoted", "NAME=Foo\nPRETTY_NAME=Foo Linux\n", "Foo Linux"},
		{"none", "NAME=Foo\n", "Linux"},
		{"empty", "", "Linux"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseOSRelease(tt.data); got != tt.want {
				t.Errorf("ParseOSRelease() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseID(t *testing.T) {
	if got := ParseID("  0123abcd\n"); got != "0123abcd" {
		t.Errorf("ParseID() = %q", got)
	}
}
