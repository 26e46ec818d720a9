package diagram

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
)

// CSS styles the pictures: inline it in a <style> element or serve it.
//
//go:embed diagram.css
var CSS string

//go:embed *.tmpl
var templateFiles embed.FS

var templates = template.Must(template.New("diagram").Funcs(template.FuncMap{
	"add": func(a, b float64) float64 { return a + b },
	"sub": func(a, b float64) float64 { return a - b },
}).ParseFS(templateFiles, "*.tmpl"))

// SVG draws the chart as an <svg> element.
func (g *Gantt) SVG() (template.HTML, error) {
	return render("gantt", g.ID, g.layout())
}

// SVG draws the series as an <svg> element.
func (s *Series) SVG() (template.HTML, error) {
	return render("series", s.ID, s.layout())
}

// SVG draws the graph as an <svg> element.
func (g *Graph) SVG() (template.HTML, error) {
	return render("graph", g.ID, g.place())
}

func render(name, id string, data any) (template.HTML, error) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("draw %s %q: %w", name, id, err)
	}
	return template.HTML(b.String()), nil // #nosec G203 -- html/template escaped every value
}
