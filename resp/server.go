package resp

// TODO(stub): replaced by the real family implementation.

// cmdInfo implements INFO.
func (s *Server) cmdInfo(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdConfigResetstat implements CONFIG|RESETSTAT.
func (s *Server) cmdConfigResetstat(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdConfigRewrite implements CONFIG|REWRITE.
func (s *Server) cmdConfigRewrite(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdConfigHelp implements CONFIG|HELP.
func (s *Server) cmdConfigHelp(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdConfigGet implements CONFIG|GET.
func (s *Server) cmdConfigGet(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdConfigSet implements CONFIG|SET.
func (s *Server) cmdConfigSet(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdCommandCount implements COMMAND|COUNT.
func (s *Server) cmdCommandCount(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdCommandDocs implements COMMAND|DOCS.
func (s *Server) cmdCommandDocs(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdCommandInfo implements COMMAND|INFO.
func (s *Server) cmdCommandInfo(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdCommandList implements COMMAND|LIST.
func (s *Server) cmdCommandList(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdCommandGetkeys implements COMMAND|GETKEYS.
func (s *Server) cmdCommandGetkeys(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdCommandHelp implements COMMAND|HELP.
func (s *Server) cmdCommandHelp(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdTime implements TIME.
func (s *Server) cmdTime(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdLastsave implements LASTSAVE.
func (s *Server) cmdLastsave(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdSave implements SAVE.
func (s *Server) cmdSave(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdBgsave implements BGSAVE.
func (s *Server) cmdBgsave(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdDebug implements DEBUG.
func (s *Server) cmdDebug(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdShutdown implements SHUTDOWN.
func (s *Server) cmdShutdown(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }
