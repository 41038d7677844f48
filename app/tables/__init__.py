"""Database tables read across domains.

The job tables (jobs, their parameters and the extractions answering them) are the source of truth the jobs domain
writes and review, the dashboard and the flows read; they sit below every domain so that reading them does not
mean depending on the jobs domain."""
