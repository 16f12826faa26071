package redact

import "testing"

// TestSweep15PctProse: prose URL-encoded with "%20" for a space
// (encodeURIComponent, Python's quote), a key before an encoded ':' with
// "%20" around it, and '+'-encoded prose encoded again ("%2B" for its
// spaces, a state= parameter's): printed, no finding.
func TestSweep15PctProse(t *testing.T) {
	const pw = "Xk9mP2qLs7"
	checkSweep7(t, []sweep7Form{
		{"the%20password%20is%20" + pw, pw, false},
		{"GET /notes?text=my%20password%20was%20" + pw + "&lang=en HTTP/1.1", pw, false},
		{"q=the%20password%20for%20bob%40example.com%20is%20" + pw, pw, false},
		{"q=api%20key%3A%20" + pw + "Tw", pw + "Tw", false},
		{"q=API%20key%20%3D%20" + pw + "Tw&x=1", pw + "Tw", false},
		{"state=q%3Dthe%2Bpassword%2Bis%2B" + pw + "&x=1", pw, false},
		{"state=q%3Dthe%2Bpassword%2Bfor%2Bbob%2540example.com%2Bis%2BXk9%2523mP2qLs&x=1", "Xk9%2523mP2qLs", false},
	}, false, []string{
		"the%20password%20is%20expired",
		"the%20password%20is%2012%20characters",
		"the%20address%20is%20" + pw,
		"q=the%20build%20is%20v2.3.1",
		"q=api%20keys%3A%2012",
		"q=monkey%3A%20" + pw,
		"state=q%3Dthe%2Bbuild%2Bis%2B" + pw + "&x=1",
		"state=q%3Dthe%2Bpassword%2Bis%2Bexpired&x=1",
	})
}
