package gateway

import "testing"

func TestLoadMethods(t *testing.T) {
	methods, err := LoadMethods()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]Method{
		"/application.ApplicationService/List":   {Verb: "GET", Path: "/api/v1/applications"},
		"/application.ApplicationService/Get":    {Verb: "GET", Path: "/api/v1/applications/{name}"},
		"/application.ApplicationService/Update": {Verb: "PUT", Path: "/api/v1/applications/{application.metadata.name}", Body: "application"},
		"/application.ApplicationService/Watch":  {Verb: "GET", Path: "/api/v1/stream/applications", Stream: true},
		"/session.SessionService/Create":         {Verb: "POST", Path: "/api/v1/session", Body: "*"},
		"/version.VersionService/Version":        {Verb: "GET", Path: "/api/version"},
	}
	for name, want := range cases {
		got := methods[name]
		if got == nil {
			t.Errorf("%s is not loaded", name)
			continue
		}
		if got.Verb != want.Verb || got.Path != want.Path || got.Body != want.Body || got.Stream != want.Stream || got.In == nil || got.Out == nil {
			t.Errorf("%s = %+v, want %+v", name, got, want)
		}
	}
	t.Logf("%d methods", len(methods))
}
