package validate

import "github.com/e2atap/e2atap/e2a"

// haveRouteMarks: routeMarksAVX2 may run here.
var haveRouteMarks = e2a.HasAVX2()

//go:noescape
func routeMarksAVX2(p *byte, blocks int, out *uint64)

//go:noescape
func structMarksAVX2(p *byte, blocks int, out *uint64)
