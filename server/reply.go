package server

import "github.com/kvserver/kvserver/commands"

// CLIENT REPLY. Redis drops each reply written while the client's
// REPLY_OFF or REPLY_SKIP flag is set; only CLIENT REPLY and RESET change
// the flags, and they do so before writing their own reply, so dropping a
// command's replies after it ran when a flag is set then is the same. EXEC
// applies the rule to its header and to each queued command's reply, since
// a queued CLIENT REPLY changes it halfway.

// SetReply is CLIENT REPLY ON|OFF|SKIP and RESET's part of it.
func (s session) SetReply(m commands.ReplyMode) {
	c := s.c
	switch m {
	case commands.ReplyOn:
		c.replyOff, c.replySkip = false, false
	case commands.ReplyOff:
		c.replyOff = true
	case commands.ReplySkip:
		if !c.replyOff {
			c.replySkipNext = true
		}
	case commands.ReplyReset:
		c.replyOff, c.replySkipNext = false, false
	}
}

// dropSuppressedReplies drops what was written since c.replyMark if
// replies are off or skipped now, and moves the mark past it.
func (c *Client) dropSuppressedReplies() {
	if c.replyOff || c.replySkip {
		c.w.Discard(c.replyMark)
	}
	c.replyMark = c.w.Mark()
}

// endReplies closes a command's replies: it drops the suppressed ones
// and lets a SKIP asked for by this command apply to the next one
// (Redis's resetClient).
func (c *Client) endReplies() {
	c.dropSuppressedReplies()
	c.replySkip, c.replySkipNext = c.replySkipNext, false
}
