// SPDX-License-Identifier: LGPL-2.1-or-later
// A small crictl for the e2e-k8s nodes: the subcommands kubeadm 1.20 execs (info, inspecti, pull,
// pods -q, stopp, rmp) and two the harness reads (ps, images), over the tree's own CRI v1alpha2
// client; cri-tools is not in Debian 12. Built by tools/k8s-build.sh inside the Kubernetes tree.
package main

import (
	"encoding/json"
	"fmt"
	"io/ioutil"
	"os"
	"strings"
	"time"

	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1alpha2"
	"k8s.io/kubernetes/pkg/kubelet/cri/remote"
	"sigs.k8s.io/yaml"
)

const defaultEndpoint = "unix:///run/containerd/containerd.sock"
const timeout = 30 * time.Second

// The endpoint: -r/--runtime-endpoint, then $CONTAINER_RUNTIME_ENDPOINT, then /etc/crictl.yaml's
// runtime-endpoint, then containerd's default socket.
func endpoint(flag string) string {
	ep := flag
	if ep == "" {
		ep = os.Getenv("CONTAINER_RUNTIME_ENDPOINT")
	}
	if ep == "" {
		var cfg struct {
			RuntimeEndpoint string `json:"runtime-endpoint"`
		}
		if data, err := ioutil.ReadFile("/etc/crictl.yaml"); err == nil {
			if err := yaml.Unmarshal(data, &cfg); err != nil {
				fail("parsing /etc/crictl.yaml: %v", err)
			}
			ep = cfg.RuntimeEndpoint
		}
	}
	if ep == "" {
		ep = defaultEndpoint
	}
	if !strings.Contains(ep, "://") {
		ep = "unix://" + ep
	}
	return ep
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "crictl: "+format+"\n", args...)
	os.Exit(1)
}

func printJSON(v interface{}) {
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		fail("%v", err)
	}
	fmt.Println(string(out))
}

// Global options before the subcommand; returns the endpoint flag and the rest.
func parseGlobal(args []string) (string, []string) {
	ep := ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		a := args[0]
		switch {
		case a == "-r" || a == "--runtime-endpoint":
			if len(args) < 2 {
				fail("%s needs a value", a)
			}
			ep, args = args[1], args[2:]
		case strings.HasPrefix(a, "-r=") || strings.HasPrefix(a, "--runtime-endpoint="):
			ep, args = a[strings.Index(a, "=")+1:], args[1:]
		default:
			fail("unknown option %s", a)
		}
	}
	return ep, args
}

func hasFlag(args []string, names ...string) bool {
	for _, a := range args {
		for _, n := range names {
			if a == n {
				return true
			}
		}
	}
	return false
}

func operands(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

func runtimeService(ep string) internalapi.RuntimeService {
	rs, err := remote.NewRemoteRuntimeService(ep, timeout)
	if err != nil {
		fail("connecting to %s: %v", ep, err)
	}
	return rs
}

func imageService(ep string) internalapi.ImageManagerService {
	is, err := remote.NewRemoteImageService(ep, timeout)
	if err != nil {
		fail("connecting to %s: %v", ep, err)
	}
	return is
}

func cmdInfo(ep string) {
	st, err := runtimeService(ep).Status()
	if err != nil {
		fail("getting status: %v", err)
	}
	printJSON(st)
}

func cmdPods(ep string, args []string) {
	pods, err := runtimeService(ep).ListPodSandbox(nil)
	if err != nil {
		fail("listing pod sandboxes: %v", err)
	}
	for _, p := range pods {
		if hasFlag(args, "-q", "--quiet") {
			fmt.Println(p.Id)
		} else {
			fmt.Printf("%s %s %s/%s\n", p.Id, p.State, p.Metadata.Namespace, p.Metadata.Name)
		}
	}
}

func cmdPs(ep string, args []string) {
	var filter *runtimeapi.ContainerFilter
	if !hasFlag(args, "-a", "--all") {
		filter = &runtimeapi.ContainerFilter{
			State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		}
	}
	cs, err := runtimeService(ep).ListContainers(filter)
	if err != nil {
		fail("listing containers: %v", err)
	}
	for _, c := range cs {
		if hasFlag(args, "-q", "--quiet") {
			fmt.Println(c.Id)
		} else {
			fmt.Printf("%s %s %s %s\n", c.Id, c.State, c.Metadata.Name, c.PodSandboxId)
		}
	}
}

func cmdSandboxes(ep string, args []string, remove bool) {
	rs := runtimeService(ep)
	for _, id := range operands(args) {
		var err error
		if remove {
			err = rs.RemovePodSandbox(id)
		} else {
			err = rs.StopPodSandbox(id)
		}
		if err != nil {
			fail("%s %s: %v", map[bool]string{false: "stopping", true: "removing"}[remove], id, err)
		}
		fmt.Println(id)
	}
}

func cmdImages(ep string, args []string) {
	is := imageService(ep)
	switch {
	case len(args) > 0 && args[0] == "pull":
		for _, img := range operands(args[1:]) {
			ref, err := is.PullImage(&runtimeapi.ImageSpec{Image: img}, nil, nil)
			if err != nil {
				fail("pulling %s: %v", img, err)
			}
			fmt.Printf("Image is up to date for %s\n", ref)
		}
	case len(args) > 0 && args[0] == "inspecti":
		for _, img := range operands(args[1:]) {
			st, err := is.ImageStatus(&runtimeapi.ImageSpec{Image: img})
			if err != nil {
				fail("image status of %s: %v", img, err)
			}
			if st == nil {
				fail("no such image %s present", img)
			}
			printJSON(st)
		}
	default:
		imgs, err := is.ListImages(nil)
		if err != nil {
			fail("listing images: %v", err)
		}
		for _, img := range imgs {
			fmt.Println(strings.Join(img.RepoTags, " "))
		}
	}
}

func main() {
	flag, args := parseGlobal(os.Args[1:])
	if len(args) == 0 {
		fail("usage: crictl [-r ENDPOINT] info|pods [-q]|stopp ID...|rmp ID...|ps [-a] [-q]|images|inspecti IMAGE|pull IMAGE")
	}
	ep := endpoint(flag)
	switch args[0] {
	case "info":
		cmdInfo(ep)
	case "pods":
		cmdPods(ep, args[1:])
	case "ps":
		cmdPs(ep, args[1:])
	case "stopp":
		cmdSandboxes(ep, args[1:], false)
	case "rmp":
		cmdSandboxes(ep, args[1:], true)
	case "images", "pull", "inspecti":
		cmdImages(ep, args)
	default:
		fail("unknown command %s", args[0])
	}
}
