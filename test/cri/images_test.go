package cri_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// busyboxApplets are the commands the test images link to busybox.
var busyboxApplets = []string{"sh", "echo", "cat", "sleep", "true", "false", "ls", "ps", "id", "env", "pwd", "hostname", "wc", "head", "grep", "kill", "top", "touch", "mkdir", "stat", "nc", "wget", "date", "uname", "whoami", "tail", "sort", "test", "["}

// passwd and group are the test images' /etc files: busybox images have
// these users (critest's image-user tests name www-data).
const (
	passwd = "root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1:daemon:/usr/sbin:/bin/false\nwww-data:x:33:33:www-data:/var/www:/bin/false\nnobody:x:65534:65534:nobody:/home:/bin/false\n"
	group  = "root:x:0:\ndaemon:x:1:\nwww-data:x:33:\nnogroup:x:65534:\n"
)

// image is one image the registry serves: a busybox root plus extra files,
// with an image config.
type image struct {
	refs  []string          // repository paths with tags, under the registry
	files map[string]string // extra files (path in the root: content)
	user  string            // config User
	cmd   []string          // config Cmd
	entry []string          // config Entrypoint
	bins  map[string]string // extra executables (path in the root: host path)
}

// testImages are the images the pod tests and critest pull. The names are
// those critest uses (registry.k8s.io and gcr.io are mirrored to the local
// registry); the contents are built here, from busybox-static.
func testImages(pause string) []image {
	imgs := []image{
		{refs: []string{"pause:3.9", "pause:3.6"}, entry: []string{"/pause"}, bins: map[string]string{"pause": pause}},
		{refs: []string{"e2e-test-images/busybox:1.29-2", "moat/busybox:1"}, cmd: []string{"sh"}},
		{refs: []string{"k8s-staging-cri-tools/test-image-latest:latest", "k8s-staging-cri-tools/test-image-tag:test", "k8s-staging-cri-tools/test-image-tag:all"}, cmd: []string{"sh"}},
		{refs: []string{"k8s-staging-cri-tools/test-image-tags:1", "k8s-staging-cri-tools/test-image-tags:2", "k8s-staging-cri-tools/test-image-tags:3"}, cmd: []string{"sh"}},
		{refs: []string{"k8s-staging-cri-tools/test-image-predefined-group:latest"}, user: "1000",
			files: map[string]string{
				"etc/passwd": passwd + "default-user:x:1000:1000:Linux User,,,:/home/default-user:/bin/sh\n",
				"etc/group":  group + "default-user:x:1000:\ngroup-defined-in-image:x:50000:default-user\n",
			}},
	}
	for i := 1; i <= 3; i++ {
		imgs = append(imgs, image{refs: []string{fmt.Sprintf("k8s-staging-cri-tools/test-image-%d:latest", i)}, cmd: []string{"sh"},
			files: map[string]string{fmt.Sprintf("test-image-%d", i): fmt.Sprintf("%d\n", i)}})
	}
	for name, user := range map[string]string{"uid": "1002", "username": "www-data", "uid-group": "1003:1004", "username-group": "www-data:1004"} {
		imgs = append(imgs, image{refs: []string{"k8s-staging-cri-tools/test-image-user-" + name + ":latest"}, user: user, cmd: []string{"sh"}})
	}
	return imgs
}

// pushImages builds each image as an OCI layout with umoci and copies it
// into the registry at addr with skopeo.
func pushImages(dir, addr string, imgs []image) error {
	layout := filepath.Join(dir, "oci")
	if out, err := exec.Command("umoci", "init", "--layout", layout).CombinedOutput(); err != nil {
		return fmt.Errorf("umoci init: %v\n%s", err, out)
	}
	for i, img := range imgs {
		tag := fmt.Sprintf("img%d", i)
		ref := layout + ":" + tag
		bundle := filepath.Join(dir, "bundle-"+tag)
		if out, err := exec.Command("umoci", "new", "--image", ref).CombinedOutput(); err != nil {
			return fmt.Errorf("umoci new: %v\n%s", err, out)
		}
		if out, err := exec.Command("umoci", "unpack", "--image", ref, bundle).CombinedOutput(); err != nil {
			return fmt.Errorf("umoci unpack: %v\n%s", err, out)
		}
		if err := fillRoot(filepath.Join(bundle, "rootfs"), img); err != nil {
			return err
		}
		if out, err := exec.Command("umoci", "repack", "--image", ref, bundle).CombinedOutput(); err != nil {
			return fmt.Errorf("umoci repack: %v\n%s", err, out)
		}
		os.RemoveAll(bundle)
		args := []string{"config", "--image", ref, "--config.env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
		if img.user != "" {
			args = append(args, "--config.user", img.user)
		}
		for _, c := range img.cmd {
			args = append(args, "--config.cmd", c)
		}
		for _, c := range img.entry {
			args = append(args, "--config.entrypoint", c)
		}
		if out, err := exec.Command("umoci", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("umoci config: %v\n%s", err, out)
		}
		for _, r := range img.refs {
			out, err := exec.Command("skopeo", "copy", "--quiet", "--dest-tls-verify=false", "oci:"+ref, "docker://"+addr+"/"+r).CombinedOutput()
			if err != nil {
				return fmt.Errorf("skopeo copy %s: %v\n%s", r, err, out)
			}
		}
	}
	return nil
}

// fillRoot writes img's root: busybox and its applets (unless the image
// is the pause image), /etc, the usual directories, and img's files.
func fillRoot(root string, img image) error {
	for _, d := range []string{"bin", "etc", "tmp", "root", "home", "var/www"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{"etc/passwd": passwd, "etc/group": group}
	for p, c := range img.files {
		files[p] = c
	}
	for p, c := range files {
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			return err
		}
	}
	bins := map[string]string{"bin/busybox": "/bin/busybox"}
	if len(img.bins) != 0 {
		bins = img.bins
	}
	for p, src := range bins {
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(root, p), data, 0o755); err != nil {
			return err
		}
	}
	if _, ok := bins["bin/busybox"]; !ok {
		return nil
	}
	for _, a := range busyboxApplets {
		if err := os.Symlink("busybox", filepath.Join(root, "bin", a)); err != nil && !strings.Contains(err.Error(), "exists") {
			return err
		}
	}
	return nil
}
