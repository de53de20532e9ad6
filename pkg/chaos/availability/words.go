package availability

import "strconv"

// Plural is "1 request" or "2 requests": a count and its noun, agreeing.
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
