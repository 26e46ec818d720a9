package rbac

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Resources and actions of Argo CD's RBAC that wavecd's API checks.
const (
	ResourceApplications    = "applications"
	ResourceApplicationSets = "applicationsets"
	ResourceProjects        = "projects"
	ResourceAccounts        = "accounts"
	ResourceClusters        = "clusters"
	ResourceRepositories    = "repositories"
	ResourceLogs            = "logs"
	ResourceExec            = "exec"

	ActionGet      = "get"
	ActionCreate   = "create"
	ActionUpdate   = "update"
	ActionDelete   = "delete"
	ActionSync     = "sync"
	ActionOverride = "override"
)

// Built-in role names.
const (
	RoleAdmin    = "role:admin"
	RoleReadonly = "role:readonly"
)

// Effect is the last field of a p line.
type Effect string

// The effects.
const (
	Allow Effect = "allow"
	Deny  Effect = "deny"
)

// Rule is one p line.
type Rule struct {
	Subject, Resource, Action, Object string
	Effect                            Effect
}

// Grouping is one g line: Member (a user, group or role) has Role.
type Grouping struct {
	Member, Role string
}

// Policy is a parsed policy CSV.
type Policy struct {
	Rules     []Rule
	Groupings []Grouping
}

// Append adds the lines of o after those of p.
func (p *Policy) Append(o Policy) {
	p.Rules = append(p.Rules, o.Rules...)
	p.Groupings = append(p.Groupings, o.Groupings...)
}

// builtinPolicy defines role:readonly and role:admin and makes the local
// admin user an admin.
const builtinPolicy = `
p, role:readonly, applications, get, */*, allow
p, role:readonly, applicationsets, get, */*, allow
p, role:readonly, certificates, get, *, allow
p, role:readonly, clusters, get, *, allow
p, role:readonly, repositories, get, *, allow
p, role:readonly, write-repositories, get, *, allow
p, role:readonly, projects, get, *, allow
p, role:readonly, accounts, get, *, allow
p, role:readonly, gpgkeys, get, *, allow
p, role:readonly, logs, get, */*, allow

p, role:admin, applications, create, */*, allow
p, role:admin, applications, update, */*, allow
p, role:admin, applications, update/*, */*, allow
p, role:admin, applications, delete, */*, allow
p, role:admin, applications, delete/*, */*, allow
p, role:admin, applications, sync, */*, allow
p, role:admin, applications, override, */*, allow
p, role:admin, applications, action/*, */*, allow
p, role:admin, applicationsets, create, */*, allow
p, role:admin, applicationsets, update, */*, allow
p, role:admin, applicationsets, delete, */*, allow
p, role:admin, certificates, create, *, allow
p, role:admin, certificates, update, *, allow
p, role:admin, certificates, delete, *, allow
p, role:admin, clusters, create, *, allow
p, role:admin, clusters, update, *, allow
p, role:admin, clusters, delete, *, allow
p, role:admin, repositories, create, *, allow
p, role:admin, repositories, update, *, allow
p, role:admin, repositories, delete, *, allow
p, role:admin, write-repositories, create, *, allow
p, role:admin, write-repositories, update, *, allow
p, role:admin, write-repositories, delete, *, allow
p, role:admin, projects, create, *, allow
p, role:admin, projects, update, *, allow
p, role:admin, projects, delete, *, allow
p, role:admin, accounts, update, *, allow
p, role:admin, gpgkeys, create, *, allow
p, role:admin, gpgkeys, delete, *, allow
p, role:admin, exec, create, */*, allow
p, role:admin, logs, get, */*, allow

g, role:admin, role:readonly
g, admin, role:admin
`

// Builtin returns the built-in policy. (A test checks that it parses.)
func Builtin() Policy {
	p, _ := Parse(builtinPolicy)
	return p
}

// Parse reads a policy CSV. Empty lines and lines starting with # are
// skipped; any other malformed line is an error naming its line number.
func Parse(text string) (Policy, error) {
	var p Policy
	var errs []error
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := p.addLine(line); err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", i+1, err))
		}
	}
	return p, errors.Join(errs...)
}

func (p *Policy) addLine(line string) error {
	fields, err := splitLine(line)
	if err != nil {
		return err
	}
	switch fields[0] {
	case "p":
		if len(fields) != 6 && len(fields) != 5 {
			return fmt.Errorf("%q: a p line has 6 fields: p, subject, resource, action, object, effect", line)
		}
		r := Rule{Subject: fields[1], Resource: fields[2], Action: fields[3], Object: fields[4], Effect: Allow}
		if len(fields) == 6 {
			r.Effect = Effect(strings.ToLower(fields[5]))
		}
		if r.Effect != Allow && r.Effect != Deny {
			return fmt.Errorf("%q: effect %q is not allow or deny", line, fields[5])
		}
		if r.Subject == "" || r.Resource == "" || r.Action == "" || r.Object == "" {
			return fmt.Errorf("%q: empty field", line)
		}
		p.Rules = append(p.Rules, r)
	case "g":
		if len(fields) != 3 || fields[1] == "" || fields[2] == "" {
			return fmt.Errorf("%q: a g line has 3 fields: g, subject, role", line)
		}
		p.Groupings = append(p.Groupings, Grouping{Member: fields[1], Role: fields[2]})
	default:
		return fmt.Errorf("%q: a line starts with p or g", line)
	}
	return nil
}

// splitLine splits one CSV line, trimming spaces; quotes protect commas.
func splitLine(line string) ([]string, error) {
	r := csv.NewReader(strings.NewReader(line))
	r.TrimLeadingSpace = true
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	fields, err := r.Read()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%q: %w", line, err)
	}
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("%q: empty line", line)
	}
	return fields, nil
}
