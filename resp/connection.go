package resp

// TODO(stub): replaced by the real family implementation.

// cmdPing implements PING.
func (s *Server) cmdPing(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdEcho implements ECHO.
func (s *Server) cmdEcho(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdQuit implements QUIT.
func (s *Server) cmdQuit(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdReset implements RESET.
func (s *Server) cmdReset(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdAuth implements AUTH.
func (s *Server) cmdAuth(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdHello implements HELLO.
func (s *Server) cmdHello(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdClientGetname implements CLIENT|GETNAME.
func (s *Server) cmdClientGetname(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdClientHelp implements CLIENT|HELP.
func (s *Server) cmdClientHelp(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdClientInfo implements CLIENT|INFO.
func (s *Server) cmdClientInfo(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdClientNoEvict implements CLIENT|NO-EVICT.
func (s *Server) cmdClientNoEvict(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdClientList implements CLIENT|LIST.
func (s *Server) cmdClientList(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdClientKill implements CLIENT|KILL.
func (s *Server) cmdClientKill(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdClientId implements CLIENT|ID.
func (s *Server) cmdClientId(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdClientSetinfo implements CLIENT|SETINFO.
func (s *Server) cmdClientSetinfo(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdClientNoTouch implements CLIENT|NO-TOUCH.
func (s *Server) cmdClientNoTouch(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }

// cmdClientMaintNotifications implements CLIENT|MAINT_NOTIFICATIONS.
func (s *Server) cmdClientMaintNotifications(c *Client, args [][]byte) {
	c.w.Error("ERR not implemented")
}

// cmdClientSetname implements CLIENT|SETNAME.
func (s *Server) cmdClientSetname(c *Client, args [][]byte) { c.w.Error("ERR not implemented") }
