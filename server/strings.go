package server

import "github.com/kvserver/kvserver/engine"

// update runs fn against the client's database as one atomic write step.
func (s *Server) update(c *Client, fn func(tx *engine.Tx)) {
	s.eng.Update(c.DB(), func(tx *engine.Tx) {
		tx.SetNoTouch(c.noTouch.Load())
		fn(tx)
	})
}

// view runs fn against the client's database as one atomic read step.
func (s *Server) view(c *Client, fn func(tx *engine.Tx)) {
	s.eng.View(c.DB(), func(tx *engine.Tx) {
		tx.SetNoTouch(c.noTouch.Load())
		fn(tx)
	})
}
