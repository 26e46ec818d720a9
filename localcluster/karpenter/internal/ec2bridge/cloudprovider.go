package ec2bridge

import (
	"context"

	"github.com/awslabs/operatorpkg/status"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kwokapis "sigs.k8s.io/karpenter/kwok/apis"
	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
)

// ec2NodeClassGK is what a NodePool's or NodeClaim's nodeClassRef names
// for an EC2NodeClass.
var ec2NodeClassGK = schema.GroupKind{Group: GroupVersion.Group, Kind: EC2NodeClassKind}

// cloudProvider is the KWOK provider, which also supports EC2NodeClass:
// a NodeClaim of an EC2NodeClass launches as one of the KWOKNodeClass of
// the same name. Everything else is the KWOK provider's.
type cloudProvider struct {
	cloudprovider.CloudProvider
}

// GetSupportedNodeClasses returns the KWOK provider's node classes (first:
// the default) and EC2NodeClass. Karpenter reads objects into them, so
// each call returns new ones.
func (c *cloudProvider) GetSupportedNodeClasses() []status.Object {
	return append(c.CloudProvider.GetSupportedNodeClasses(), &EC2NodeClass{})
}

// Create launches a NodeClaim of an EC2NodeClass through the KWOK provider
// with a copy whose nodeClassRef names the KWOKNodeClass of the same name,
// and returns the launched NodeClaim with the original reference.
func (c *cloudProvider) Create(ctx context.Context, nodeClaim *v1.NodeClaim) (*v1.NodeClaim, error) {
	ref := nodeClaim.Spec.NodeClassRef
	if ref == nil || ref.GroupKind() != ec2NodeClassGK {
		return c.CloudProvider.Create(ctx, nodeClaim)
	}
	kwokClaim := nodeClaim.DeepCopy()
	kwokClaim.Spec.NodeClassRef = KWOKNodeClassRef(ref.Name)
	created, err := c.CloudProvider.Create(ctx, kwokClaim)
	if created != nil {
		created.Spec.NodeClassRef = ref.DeepCopy()
	}
	return created, err
}

// KWOKNodeClassRef is the reference to the KWOKNodeClass that serves the
// EC2NodeClass name.
func KWOKNodeClassRef(name string) *v1.NodeClassReference {
	return &v1.NodeClassReference{Group: kwokapis.Group, Kind: "KWOKNodeClass", Name: name}
}
