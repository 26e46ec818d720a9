// Package gateway serves Argo CD's gRPC API (and gRPC-web) over wavecd's
// REST API: each call of Argo CD's services (their protobuf definitions
// and generated code, from Argo CD's own module) becomes the REST call its
// google.api.http annotation names, with the caller's token, and the REST
// answer becomes the call's answer. wavecd's REST API, with its RBAC and
// masking, is the one implementation behind both front doors.
package gateway

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"reflect"
	"strings"

	gogoproto "github.com/gogo/protobuf/proto"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	// The services served: their generated code registers their messages
	// and file descriptors.
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/account"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/application"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/applicationset"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/cluster"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/project"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/repository"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/session"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/settings"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/version"
)

// protoFiles are the files of the services served.
var protoFiles = []string{
	"server/account/account.proto",
	"server/application/application.proto",
	"server/applicationset/applicationset.proto",
	"server/cluster/cluster.proto",
	"server/project/project.proto",
	"server/repository/repository.proto",
	"server/session/session.proto",
	"server/settings/settings.proto",
	"server/version/version.proto",
}

// Method is one RPC and the REST call it becomes.
type Method struct {
	// Name is the gRPC method name, /package.Service/Method.
	Name string
	// In and Out are the request and response message types (pointers).
	In, Out reflect.Type
	// Stream: the server streams its answers.
	Stream bool
	// Verb and Path are the REST call; Path has {field.path} templates.
	Verb, Path string
	// Body is the field sent as the body: "*" for the whole message, ""
	// for none (the fields not in the path go in the query).
	Body string
}

// LoadMethods reads the served services' methods and their REST mapping
// from the registered file descriptors.
func LoadMethods() (map[string]*Method, error) {
	out := map[string]*Method{}
	for _, file := range protoFiles {
		fd, err := fileDescriptor(file)
		if err != nil {
			return nil, err
		}
		for _, svc := range fd.GetService() {
			for _, m := range svc.GetMethod() {
				method, err := newMethod(fd.GetPackage(), svc.GetName(), m)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", file, err)
				}
				if method != nil {
					out[method.Name] = method
				}
			}
		}
	}
	return out, nil
}

func fileDescriptor(file string) (*descriptorpb.FileDescriptorProto, error) {
	gz := gogoproto.FileDescriptor(file)
	if gz == nil {
		return nil, fmt.Errorf("no file descriptor %s is registered", file)
	}
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("file descriptor %s: %w", file, err)
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("file descriptor %s: %w", file, err)
	}
	fd := &descriptorpb.FileDescriptorProto{}
	if err := proto.Unmarshal(raw, fd); err != nil {
		return nil, fmt.Errorf("file descriptor %s: %w", file, err)
	}
	return fd, nil
}

// newMethod maps one method; nil for a method without a REST mapping or
// with a client stream (none of the CLI's commands here use one).
func newMethod(pkg, svc string, m *descriptorpb.MethodDescriptorProto) (*Method, error) {
	rule, _ := proto.GetExtension(m.GetOptions(), annotations.E_Http).(*annotations.HttpRule)
	if rule == nil || m.GetClientStreaming() {
		return nil, nil
	}
	method := &Method{Name: "/" + pkg + "." + svc + "/" + m.GetName(), Stream: m.GetServerStreaming(), Body: rule.GetBody()}
	switch p := rule.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		method.Verb, method.Path = "GET", p.Get
	case *annotations.HttpRule_Post:
		method.Verb, method.Path = "POST", p.Post
	case *annotations.HttpRule_Put:
		method.Verb, method.Path = "PUT", p.Put
	case *annotations.HttpRule_Delete:
		method.Verb, method.Path = "DELETE", p.Delete
	case *annotations.HttpRule_Patch:
		method.Verb, method.Path = "PATCH", p.Patch
	default:
		return nil, nil
	}
	var err error
	if method.In, err = messageType(m.GetInputType()); err != nil {
		return nil, err
	}
	if method.Out, err = messageType(m.GetOutputType()); err != nil {
		return nil, err
	}
	return method, nil
}

// messageType is the Go type registered for a message's full name.
func messageType(name string) (reflect.Type, error) {
	name = strings.TrimPrefix(name, ".")
	t := gogoproto.MessageType(name)
	if t == nil {
		return nil, fmt.Errorf("no Go type is registered for message %s", name)
	}
	return t, nil
}
