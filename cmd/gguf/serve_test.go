package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ggufkit/gguf/internal/shared"
)

// TestServe: gguf serve with llama-server's spellings (-np, -c, -to, -ngl
// ignored with a note) and the key from LLAMA_API_KEY listens on a free
// loopback port, says where, refuses a request without the key and
// answers one with it.
func TestServe(t *testing.T) {
	model := shared.Path(t, "models", "stories260K-f32.gguf")
	cmd := exec.Command(ggufBin, "serve", model, "--port", "0", "-np", "2", "-c", "128", "-to", "30", "-t", "1", "-ngl", "99")
	cmd.Env = append(os.Environ(), "LLAMA_API_KEY=sekret")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := regexp.MustCompile(`on http://(127\.0\.0\.1:\d+)/`)
	sc := bufio.NewScanner(stderr)
	var url, lines string
	for url == "" && sc.Scan() {
		lines += sc.Text() + "\n"
		if m := addr.FindStringSubmatch(sc.Text()); m != nil {
			url = "http://" + m[1]
		}
	}
	if url == "" {
		t.Fatalf("no address on stderr:\n%s", lines)
	}
	go io.Copy(io.Discard, stderr)
	if !strings.Contains(lines, "--n-gpu-layers ignored") || !strings.Contains(lines, "2 slots of 128 tokens") {
		t.Errorf("stderr:\n%s", lines)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	send := func(key string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url+"/completion", strings.NewReader(`{"prompt":"Once upon a time","n_predict":5,"temperature":0}`))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := send(""); code != 401 {
		t.Errorf("without the key: %d %s", code, b)
	}
	if code, b := send("sekret"); code != 200 || !strings.Contains(b, `"content":", there was a little"`) {
		t.Errorf("with the key: %d %s", code, b)
	}
}

// TestServeRefusals: what serve cannot do is refused in one line before
// it listens.
func TestServeRefusals(t *testing.T) {
	model := shared.Path(t, "models", "stories260K-f32.gguf")
	trace := filepath.Join(t.TempDir(), "t.trace")
	for _, c := range []struct {
		args     []string
		mentions string
	}{
		{[]string{"serve", "-"}, "needs a local file"},
		{[]string{"serve", model, "--moe-trace", trace}, "--moe-trace"},
		{[]string{"serve", model, "--parallel", "0"}, "--parallel"},
		{[]string{"serve", model, "--reasoning", "maybe"}, "--reasoning"},
		{[]string{"serve", model, "--chat-template", "nonesuch"}, "chat template"},
		{[]string{"serve", model, "--port", "70000"}, "--port"},
	} {
		checkOneLineError(t, runGGUF(t, nil, c.args...), exitUsage, c.mentions)
	}
}
