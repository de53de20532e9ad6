package experiment

// Resolved fills a run's defaults, checks its settings and only then resolves what it acts on,
// as every run and dry run starts: nothing is read from the cluster for settings that fail.
func Resolved[T any](s interface {
	Defaults()
	Validate() error
}, resolve func() (T, error)) (T, error) {
	s.Defaults()
	if err := s.Validate(); err != nil {
		var none T
		return none, err
	}
	return resolve()
}
