// Command kubectl is upstream kubectl, built from its published Go modules at a pinned release so that the
// tests' judge of a Kubernetes API is the real client on any machine, with nothing preinstalled.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		// Print the error once, as upstream's kubectl main does.
		util.CheckErr(err)
	}
	os.Exit(0)
}
