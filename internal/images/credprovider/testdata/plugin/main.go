// Command plugin is a credential provider plugin for berth's tests. Its
// first argument chooses what it does:
//
//	ok       answer for the requested image: user $PLUGIN_USER, password
//	         $PLUGIN_PASSWORD (default "pw-<image>") for the location
//	         $PLUGIN_LOCATION (default: the image), cacheKeyType
//	         $PLUGIN_CACHE_KEY_TYPE (default Image),
//	         cacheDuration $PLUGIN_CACHE_DURATION when set
//	hang     sleep for 20 s (longer than any timeout a test sets; a run a
//	         test leaves behind ends on its own)
//	garbage  print something that is not a response
//	flood    print without end
//	fail     print to stderr and exit 1
//	unknown  answer with a field the API does not have
//
// Each run appends the request's image to $PLUGIN_LOG when that is set.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

type request struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Image      string `json:"image"`
}

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "bad request:", err)
		os.Exit(2)
	}
	if log := os.Getenv("PLUGIN_LOG"); log != "" {
		f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			fmt.Fprintln(f, req.Image)
			f.Close()
		}
	}
	if delay, err := time.ParseDuration(os.Getenv("PLUGIN_DELAY")); err == nil {
		time.Sleep(delay)
	}
	mode := "ok"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	switch mode {
	case "hang":
		time.Sleep(20 * time.Second)
	case "garbage":
		fmt.Println("this is not json")
	case "flood":
		line := strings.Repeat("x", 1023) + "\n"
		for {
			if _, err := os.Stdout.WriteString(line); err != nil {
				os.Exit(3)
			}
		}
	case "fail":
		fmt.Fprintln(os.Stderr, "no credentials for you")
		os.Exit(1)
	case "ok", "unknown":
		answer(req, mode == "unknown")
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		os.Exit(2)
	}
}

func answer(req request, extra bool) {
	loc := os.Getenv("PLUGIN_LOCATION")
	if loc == "" {
		loc = req.Image
	}
	password := os.Getenv("PLUGIN_PASSWORD")
	if password == "" {
		password = "pw-" + req.Image
	}
	keyType := os.Getenv("PLUGIN_CACHE_KEY_TYPE")
	if keyType == "" {
		keyType = "Image"
	}
	resp := map[string]any{
		"apiVersion":   req.APIVersion,
		"kind":         "CredentialProviderResponse",
		"cacheKeyType": keyType,
		"auth": map[string]any{
			loc: map[string]string{"username": os.Getenv("PLUGIN_USER"), "password": password},
		},
	}
	if d := os.Getenv("PLUGIN_CACHE_DURATION"); d != "" {
		resp["cacheDuration"] = d
	}
	if extra {
		resp["extra"] = true
	}
	if err := json.NewEncoder(os.Stdout).Encode(resp); err != nil {
		os.Exit(4)
	}
}
