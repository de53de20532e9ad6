package docs

import (
	"regexp"
	"strings"
)

// CodeBlock is one fenced code block of a markdown page.
type CodeBlock struct {
	Lang string // what follows the opening fence: "sh", "yaml", or "" for an untagged block
	Line int    // the line of the opening fence, from 1
	Text string
}

// CodeBlocks returns the fenced (```) code blocks of a markdown page, in order.
func CodeBlocks(markdown string) []CodeBlock {
	var blocks []CodeBlock
	var cur *CodeBlock
	var body []string
	for i, line := range strings.Split(markdown, "\n") {
		fence, isFence := strings.CutPrefix(strings.TrimSpace(line), "```")
		switch {
		case isFence && cur == nil:
			cur, body = &CodeBlock{Lang: strings.TrimSpace(fence), Line: i + 1}, nil
		case isFence:
			cur.Text = strings.Join(body, "\n")
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body = append(body, line)
		}
	}
	return blocks
}

// shellLangs are the tags of blocks that are shell scripts as a whole.
var shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true}

// commandStart is how a line a reader would paste begins, in an untagged block without prompts:
// a command this project's docs run, or a variable assignment.
var commandStart = regexp.MustCompile(`^(kubectl|make|go|export|curl|source|kill|sleep|echo)\b|^[A-Z_][A-Z0-9_]*=`)

// synopsis matches usage lines, which show placeholders ([-n NS], [NAME], (--yes | --dry-run))
// rather than a command to paste.
var synopsis = regexp.MustCompile(`\[-|\[[A-Z]|\(--`)

// ShellCommands returns the shell a reader would paste from a block: an sh/bash/shell block
// whole; in an untagged block, each line after a "$ " prompt (with its "\" continuations) or,
// when the block has no prompt, each line that starts like a command. Usage synopses and
// other languages (yaml, json) have none.
func ShellCommands(b CodeBlock) []string {
	if shellLangs[b.Lang] {
		return []string{b.Text}
	}
	if b.Lang != "" {
		return nil
	}
	lines := strings.Split(b.Text, "\n")
	prompted := false
	for _, l := range lines {
		prompted = prompted || strings.HasPrefix(l, "$ ")
	}
	var cmds []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if prompted {
			var ok bool
			if l, ok = strings.CutPrefix(l, "$ "); !ok {
				continue
			}
		} else if !commandStart.MatchString(l) {
			continue
		}
		cmd := l
		for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
			i++
			cmd += "\n" + lines[i]
		}
		if !synopsis.MatchString(cmd) {
			cmds = append(cmds, cmd)
		}
	}
	return cmds
}
