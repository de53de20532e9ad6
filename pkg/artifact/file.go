package artifact

// File is one file of an archive or a directory, before the text pass of redaction.
type File struct {
	Path  string
	About string // what the index says of it
	Data  []byte
}

// Gap is one read that failed.
type Gap struct {
	What   string `json:"what"`
	Reason string `json:"reason"`
}
