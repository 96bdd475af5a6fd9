package simbench

import (
	"os"
	"testing"
)

func TestParsePss(t *testing.T) {
	rollup := "55d0c0a00000-7ffd4b5f2000 ---p 00000000 00:00 0                          [rollup]\n" +
		"Rss:               78012 kB\nPss:               31250 kB\nPss_Anon:          20000 kB\n"
	if got, err := parsePss([]byte(rollup)); err != nil || got != 31250*1024 {
		t.Errorf("parsePss = %d, %v; want %d", got, err, 31250*1024)
	}
	for _, bad := range []string{"Rss: 1 kB\n", "Pss: x kB\n", "Pss: 1 MB\n"} {
		if _, err := parsePss([]byte(bad)); err == nil {
			t.Errorf("parsePss(%q): no error", bad)
		}
	}
}

// TestPssNow reads the test's own PSS: above zero, at most its RSS.
func TestPssNow(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		t.Skip("no /proc/self/smaps_rollup:", err)
	}
	pss, rss := pssNow([]int{os.Getpid()}), rssNow([]int{os.Getpid()})
	if pss == 0 || pss > rss {
		t.Errorf("PSS %d, RSS %d: want 0 < PSS <= RSS", pss, rss)
	}
}
