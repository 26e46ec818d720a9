// Command wavecd is the GitOps continuous-delivery engine's single binary.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/wavecd/wavecd/internal/cli"
	"github.com/wavecd/wavecd/internal/render"
)

func main() {
	if render.IsJsonnetChild() {
		os.Exit(render.RunJsonnetChild(os.Stdin, os.Stdout))
	}
	if err := render.EnableJsonnetChild(); err != nil {
		fmt.Fprintln(os.Stderr, "warning: Jsonnet runs in this process:", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.NewRootCommand(cli.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}).ExecuteContext(ctx)
	stop()
	if err != nil {
		if msg := cli.Report(err); msg != "" {
			fmt.Fprintln(os.Stderr, msg)
		}
		os.Exit(cli.ExitCode(err))
	}
}
