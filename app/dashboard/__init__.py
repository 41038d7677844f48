"""The review dashboard: server-rendered HTML over the review queue, with the dispatch timeline and the source
page of every flagged answer."""
