package server

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// cdp is a Chrome DevTools Protocol client over --remote-debugging-pipe:
// NUL-terminated JSON messages on the browser's fds 3 (commands) and 4
// (replies and events), so no WebSocket is needed.
type cdp struct {
	w  io.Writer
	r  *bufio.Reader
	id int
}

// call sends method to the target of session ("" for the browser) and
// returns its result, skipping the events that come between.
func (c *cdp) call(session, method string, params any) (json.RawMessage, error) {
	c.id++
	msg := map[string]any{"id": c.id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	if _, err := c.w.Write(append(b, 0)); err != nil {
		return nil, err
	}
	for {
		line, err := c.r.ReadBytes(0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var reply struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line[:len(line)-1], &reply); err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		if reply.ID != c.id {
			continue
		}
		if reply.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, reply.Error.Message)
		}
		return reply.Result, nil
	}
}

// eval evaluates expr in the page and decodes its value into v.
func (c *cdp) eval(session, expr string, v any) error {
	res, err := c.call(session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	if err != nil {
		return err
	}
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	if r.Exception != nil {
		return fmt.Errorf("%s: %s", expr, r.Exception.Text)
	}
	return json.Unmarshal(r.Result.Value, v)
}

// TestPageInChromium loads the chat page in headless Chromium (Debian's
// chromium package), sends a message as a user would (type, press Send)
// and checks the DOM after the reply: the answer streamed in as token
// spans, each coloured by its probability, tok/s and prompt time shown,
// no error, Send enabled again. The screenshot goes to a temporary
// directory. Skipped where Chromium is not installed.
func TestPageInChromium(t *testing.T) {
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("no chromium here (apt-get install chromium): the page is not checked in a browser")
	}
	_, hs := newTestServer(t, 1, 128, func(c *Config) { c.NPredict = 24 })
	dir := t.TempDir()
	cmdR, cmdW, err := os.Pipe() // commands: our cmdW, its fd 3
	if err != nil {
		t.Fatal(err)
	}
	repR, repW, err := os.Pipe() // replies: its fd 4, our repR
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--remote-debugging-pipe", "--window-size=1280,720", "about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, repW}
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Skipf("chromium does not start here: %v", err)
	}
	cmdR.Close()
	repW.Close()
	// Whatever happens, the browser goes within a minute: a read blocked
	// on its pipe then fails.
	kill := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer func() {
		kill.Stop()
		cmd.Process.Kill()
		cmd.Wait()
		cmdW.Close()
		repR.Close()
	}()
	c := &cdp{w: cmdW, r: bufio.NewReader(repR)}
	res, err := c.call("", "Target.createTarget", map[string]any{"url": hs.URL + "/"})
	if err != nil {
		t.Fatalf("%v\nchromium: %s", err, stderr.String())
	}
	var target struct {
		TargetID string `json:"targetId"`
	}
	json.Unmarshal(res, &target)
	res, err = c.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(res, &att)
	s := att.SessionID
	wait := func(what, expr string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			var ok bool
			if err := c.eval(s, expr, &ok); err == nil && ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30 s", what)
			}
		}
	}
	wait("the page loads", `document.readyState === "complete" && !!document.getElementById("send")`)
	var sent bool
	if err := c.eval(s, `document.getElementById("input").focus(); document.getElementById("input").value = "Once upon a time";
		document.getElementById("send").click(); true`, &sent); err != nil {
		t.Fatal(err)
	}
	wait("the reply ends", `document.querySelectorAll("#log .assistant .tok").length > 0 && !document.getElementById("send").disabled`)
	var dom struct {
		Tokens, Coloured, Errors int
		Reply, User, TPS, Prompt string
		Stop                     bool
	}
	if err := c.eval(s, `(function () {
		var toks = document.querySelectorAll("#log .assistant .tok"), coloured = 0;
		for (var i = 0; i < toks.length; i++) { if (toks[i].style.background) { coloured++; } }
		return { Tokens: toks.length, Coloured: coloured, Errors: document.querySelectorAll("#log .err").length,
			Reply: document.querySelector("#log .assistant").textContent, User: document.querySelector("#log .user").textContent,
			TPS: document.getElementById("tps").textContent, Prompt: document.getElementById("pms").textContent,
			Stop: document.getElementById("stop").disabled };
	})()`, &dom); err != nil {
		t.Fatal(err)
	}
	t.Logf("page after the reply: %+v", dom)
	if dom.Tokens < 2 || dom.Coloured != dom.Tokens || dom.Errors != 0 || dom.Reply == "" || dom.User != "Once upon a time" ||
		dom.TPS == "-" || dom.Prompt == "-" || !dom.Stop {
		t.Fatalf("the page after the reply: %+v", dom)
	}
	res, err = c.call(s, "Page.captureScreenshot", map[string]any{"format": "png"})
	if err != nil {
		t.Fatal(err)
	}
	var shot struct {
		Data string `json:"data"`
	}
	json.Unmarshal(res, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil || len(png) < 1000 {
		t.Fatalf("screenshot of %d bytes: %v", len(png), err)
	}
	out := filepath.Join(dir, "page.png")
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", out, len(png))
	c.call("", "Browser.close", map[string]any{})
}

// limitedBuffer keeps the first 64 KiB written to it: Chromium's stderr,
// for a failure's message.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if n := 64<<10 - len(l.b); n > 0 {
		l.b = append(l.b, p[:min(n, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }
