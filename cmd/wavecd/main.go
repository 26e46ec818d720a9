// Command wavecd is the GitOps continuous-delivery engine's single binary.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/wavecd/wavecd/internal/cli"
)

func main() {
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
