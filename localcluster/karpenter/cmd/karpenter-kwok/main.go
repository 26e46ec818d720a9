// Command karpenter-kwok is Karpenter with its KWOK provider
// (sigs.k8s.io/karpenter/kwok), for wavecd-localcluster, which also serves
// NodePools written for Karpenter's AWS provider: an EC2NodeClass is served
// by the KWOKNodeClass of the same name (see internal/ec2bridge).
//
// It is configured as Karpenter is, by environment (KUBECONFIG,
// DISABLE_LEADER_ELECTION, METRICS_PORT, HEALTH_PROBE_PORT, FEATURE_GATES,
// ...).
package main

import (
	"context"
	"errors"
	"os"

	"github.com/samber/lo"
	"sigs.k8s.io/controller-runtime/pkg/log"
	kwok "sigs.k8s.io/karpenter/kwok/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/overlay"
	"sigs.k8s.io/karpenter/pkg/controllers"
	"sigs.k8s.io/karpenter/pkg/controllers/node/health"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/operator"

	"github.com/wavecd/wavecd/localcluster/karpenter/internal/ec2bridge"
)

func main() {
	ctx, op := operator.NewOperator()
	ctx, restart := context.WithCancelCause(ctx)
	bridge, err := ec2bridge.Prepare(ctx, op.GetConfig(), restart)
	if err != nil {
		log.FromContext(ctx).Error(err, "serving EC2NodeClasses with KWOK node classes")
		os.Exit(1)
	}
	instanceTypes, err := kwok.ConstructInstanceTypes(ctx)
	if err != nil {
		log.FromContext(ctx).Error(err, "constructing KWOK instance types")
	}

	// The KWOK provider, serving EC2NodeClasses too, under Karpenter's
	// NodeOverlay decorator; NodeOverlay's own controller takes the
	// provider without overlays.
	provider := bridge.Decorate(kwok.NewCloudProvider(ctx, op.GetClient(), instanceTypes))
	cloudProvider := overlay.Decorate(provider, op.GetClient(), op.InstanceTypeStore)
	repair := lo.Must(health.NewRepairPolicyMatcher(ctx, cloudProvider))
	cluster := state.NewCluster(op.Clock, op.GetClient(), cloudProvider, state.WithRepairPolicyMatcher(repair))

	op.WithControllers(ctx, controllers.NewControllers(ctx, op.Manager, op.Clock, op.GetClient(), op.EventRecorder,
		cloudProvider, provider, cluster, op.InstanceTypeStore, op.PredictionStore)...).
		WithControllers(ctx, bridge.Controllers(op.GetClient())...).
		Start(ctx)
	if errors.Is(context.Cause(ctx), ec2bridge.ErrRestart) {
		os.Exit(1) // the pod starts it again, serving EC2NodeClasses
	}
}
