// Command wavecd-localcluster runs a local Kubernetes control plane with
// simulated nodes for wavecd's tests and demos.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/wavecd/wavecd/localcluster/internal/cli"
	"github.com/wavecd/wavecd/localcluster/internal/cluster"
	"github.com/wavecd/wavecd/localcluster/internal/component"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == cluster.ComponentCommand {
		os.Exit(component.Run(os.Args[2], os.Args[3:]))
	}
	if err := cli.NewRootCommand(os.Stdout).ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
