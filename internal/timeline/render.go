package timeline

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
)

// CSS styles the charts: inline it in a <style> element or serve it.
//
//go:embed timeline.css
var CSS string

//go:embed timeline.svg.tmpl
var svgTemplates string

var templates = template.Must(template.New("timeline").Funcs(template.FuncMap{
	"add": func(a, b float64) float64 { return a + b },
	"sub": func(a, b float64) float64 { return a - b },
}).Parse(svgTemplates))

// SVG draws the chart as an <svg> element.
func (g *Gantt) SVG() (template.HTML, error) {
	return render("gantt", g.ID, g.layout())
}

// SVG draws the series as an <svg> element.
func (s *Series) SVG() (template.HTML, error) {
	return render("series", s.ID, s.layout())
}

func render(name, id string, data any) (template.HTML, error) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("draw %s %q: %w", name, id, err)
	}
	return template.HTML(b.String()), nil // #nosec G203 -- html/template escaped every value
}
