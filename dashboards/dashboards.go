package dashboards

import "embed"

// FS holds the dashboard JSON files at its root and the Grafana
// provisioning files under provisioning/.
//
//go:embed *.json provisioning/*.yaml
var FS embed.FS
