package ec2bridge

import (
	"slices"

	"github.com/awslabs/operatorpkg/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// GroupVersion is Karpenter's AWS API, whose EC2NodeClass the bridge
// serves.
var GroupVersion = schema.GroupVersion{Group: "karpenter.k8s.aws", Version: "v1"}

// EC2NodeClassKind is the kind a NodePool's nodeClassRef names.
const EC2NodeClassKind = "EC2NodeClass"

// EC2NodeClass is the part of karpenter.k8s.aws/v1 EC2NodeClass the bridge
// needs: its name and status conditions. The spec (AMIs, role, subnets,
// security groups) means nothing without EC2 and is left as it is on the
// server: the bridge only patches status.conditions.
type EC2NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Status EC2NodeClassStatus `json:"status,omitempty"`
}

// EC2NodeClassStatus holds the conditions Karpenter reads (Ready).
type EC2NodeClassStatus struct {
	Conditions []status.Condition `json:"conditions,omitempty"`
}

// EC2NodeClassList is a list of EC2NodeClasses, for the informer.
type EC2NodeClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EC2NodeClass `json:"items"`
}

// The operator's client and cache use client-go's scheme, as Karpenter's
// own APIs and the KWOK provider's do.
func init() {
	metav1.AddToGroupVersion(scheme.Scheme, GroupVersion)
	scheme.Scheme.AddKnownTypes(GroupVersion, &EC2NodeClass{}, &EC2NodeClassList{})
}

// StatusConditions makes EC2NodeClass a status.Object with Ready as its
// only (root) condition.
func (in *EC2NodeClass) StatusConditions(opts ...status.ForOption) status.ConditionSet {
	return status.NewReadyConditions().For(in, opts...)
}

func (in *EC2NodeClass) GetConditions() []status.Condition { return in.Status.Conditions }

func (in *EC2NodeClass) SetConditions(c []status.Condition) { in.Status.Conditions = c }

// DeepCopyInto copies in into out. A condition holds only values, so a
// copied slice is a deep copy.
func (in *EC2NodeClass) DeepCopyInto(out *EC2NodeClass) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Status.Conditions = slices.Clone(in.Status.Conditions)
}

func (in *EC2NodeClass) DeepCopy() *EC2NodeClass {
	if in == nil {
		return nil
	}
	out := &EC2NodeClass{}
	in.DeepCopyInto(out)
	return out
}

func (in *EC2NodeClass) DeepCopyObject() runtime.Object { return in.DeepCopy() }

func (in *EC2NodeClassList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := &EC2NodeClassList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]EC2NodeClass, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}
