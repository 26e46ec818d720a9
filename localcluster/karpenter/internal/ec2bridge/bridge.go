// Package ec2bridge lets Karpenter's KWOK provider serve NodePools written
// for Karpenter's AWS provider: their nodeClassRef names an EC2NodeClass
// (karpenter.k8s.aws/v1), which the KWOK provider alone does not know, so
// such NodePools never read Ready and nothing is provisioned for them.
//
// The bridge declares EC2NodeClass a supported node class, keeps a
// KWOKNodeClass of the same name for each EC2NodeClass and marks the
// EC2NodeClass Ready, and launches NodeClaims of an EC2NodeClass through
// that KWOKNodeClass. No EC2 API is called: the EC2NodeClass's spec is not
// read.
package ec2bridge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/awslabs/operatorpkg/controller"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	kwokapis "sigs.k8s.io/karpenter/kwok/apis"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/yaml"
)

// KWOKNodeClassVersion is the KWOK provider's node class API version.
const KWOKNodeClassVersion = "v1alpha1"

// ServedByLabel is set on the KWOKNodeClasses the bridge creates, to the
// name of the EC2NodeClass each serves (which also owns it).
const ServedByLabel = "localcluster.wavecd.io/ec2nodeclass"

// crdPollInterval is how often a Karpenter started without the EC2NodeClass
// CRD looks whether it is served now.
const crdPollInterval = 5 * time.Second

// ErrRestart is the cause Prepare's restart is called with once the
// EC2NodeClass CRD is served: the process should end and be started again
// (its pod restarts it) to serve it.
var ErrRestart = errors.New("EC2NodeClass (karpenter.k8s.aws/v1) is served now: restart to serve it")

// Bridge serves EC2NodeClasses with KWOK node classes, when the cluster
// serves the EC2NodeClass CRD at start. Without it, Karpenter is the KWOK
// provider as it is, and asks to be restarted once the CRD shows up, so
// that its pod runs it again with the bridge on (a node class kind
// Karpenter watches must exist when its controllers start).
type Bridge struct {
	enabled bool
	logged  sync.Map // EC2NodeClass name -> true, once logged as served
}

// Prepare looks whether the cluster serves EC2NodeClass. When it does, it
// makes sure the KWOKNodeClass CRD is served too, creating it from the
// KWOK provider's own when missing (a repository using Karpenter's AWS
// chart ships NodePool, NodeClaim and EC2NodeClass CRDs, not KWOK's).
// When it does not, it watches for the CRD until ctx ends, and calls
// restart with ErrRestart once it is served.
func Prepare(ctx context.Context, cfg *rest.Config, restart context.CancelCauseFunc) (*Bridge, error) {
	logger := log.FromContext(ctx).WithName("ec2nodeclass-bridge")
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ec2, err := served(disco, GroupVersion, "ec2nodeclasses")
	if err != nil {
		return nil, err
	}
	if !ec2 {
		logger.Info("EC2NodeClass (karpenter.k8s.aws/v1) is not served: NodePools of an EC2NodeClass are not served until it is (Karpenter then restarts)")
		go restartWhenServed(ctx, disco, restart)
		return &Bridge{}, nil
	}
	kwokGV := schema.GroupVersion{Group: kwokapis.Group, Version: KWOKNodeClassVersion}
	kwok, err := served(disco, kwokGV, "kwoknodeclasses")
	if err != nil {
		return nil, err
	}
	if !kwok {
		if err := installKWOKNodeClassCRD(ctx, cfg, disco, kwokGV); err != nil {
			return nil, fmt.Errorf("EC2NodeClasses are served by KWOKNodeClasses, whose CRD is missing: %w", err)
		}
		logger.Info("created the KWOKNodeClass CRD (karpenter.kwok.sh), which serves EC2NodeClasses in this cluster")
	}
	b := &Bridge{enabled: true}
	b.serveExisting(ctx, cfg)
	return b, nil
}

// serveExisting reconciles the EC2NodeClasses there are before Karpenter's
// controllers start, so that their NodePools can read Ready as early as
// those of a KWOKNodeClass (Ready when created): pods pending at start are
// otherwise first seen with the NodePool not Ready, and Karpenter looks at
// them again only 10 s later. The controller does the same again, and
// retries what fails here.
func (b *Bridge) serveExisting(ctx context.Context, cfg *rest.Config) {
	logger := log.FromContext(ctx).WithName("ec2nodeclass-bridge")
	kube, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		logger.Error(err, "reading EC2NodeClasses")
		return
	}
	list := &EC2NodeClassList{}
	if err := kube.List(ctx, list); err != nil {
		logger.Error(err, "listing EC2NodeClasses")
		return
	}
	c := &nodeClassController{kube: kube, bridge: b}
	for i := range list.Items {
		if _, err := c.Reconcile(ctx, &list.Items[i]); err != nil {
			logger.Error(err, "serving EC2NodeClass", "EC2NodeClass", list.Items[i].Name)
		}
	}
}

// Decorate returns the KWOK provider cp serving EC2NodeClasses as well.
func (b *Bridge) Decorate(cp cloudprovider.CloudProvider) cloudprovider.CloudProvider {
	if !b.enabled {
		return cp
	}
	return &cloudProvider{CloudProvider: cp}
}

// Controllers are the bridge's controllers, to run with Karpenter's.
func (b *Bridge) Controllers(kube client.Client) []controller.Controller {
	if !b.enabled {
		return nil
	}
	return []controller.Controller{&nodeClassController{kube: kube, bridge: b}}
}

// served reports whether the API server serves resource in gv.
func served(disco discovery.DiscoveryInterface, gv schema.GroupVersion, resource string) (bool, error) {
	list, err := disco.ServerResourcesForGroupVersion(gv.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovering %s: %w", gv, err)
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			return true, nil
		}
	}
	return false, nil
}

func installKWOKNodeClassCRD(ctx context.Context, cfg *rest.Config, disco discovery.DiscoveryInterface, gv schema.GroupVersion) error {
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(kwokapis.KWOKNodeClassCRD, &crd.Object); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crds).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating CRD %s: %w", crd.GetName(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		ok, err := served(disco, gv, "kwoknodeclasses")
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not served after 30s (%w)", crd.GetName(), errors.Join(err, ctx.Err()))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// restartWhenServed calls restart once EC2NodeClass is served: the node
// class kinds Karpenter watches are fixed when its controllers start.
func restartWhenServed(ctx context.Context, disco discovery.DiscoveryInterface, restart context.CancelCauseFunc) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(crdPollInterval):
		}
		if ok, _ := served(disco, GroupVersion, "ec2nodeclasses"); ok {
			log.FromContext(ctx).WithName("ec2nodeclass-bridge").Info("EC2NodeClass (karpenter.k8s.aws/v1) is served now: exiting, to serve it when restarted")
			restart(ErrRestart)
			return
		}
	}
}
